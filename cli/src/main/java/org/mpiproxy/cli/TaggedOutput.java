package org.mpiproxy.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.function.BooleanSupplier;

/**
 * Copies a rank's output stream to the launcher's, one whole line at a time, each line
 * prefixed with the rank's tag ({@code [0] }). Lines of different ranks and streams never
 * interleave within a line: every line is written under the destination's lock. A last line
 * without a newline gets one; when the launcher stopped the rank (timeout, signal) that line
 * was cut, and it ends with {@value #CUT_MARK} instead. Runs on its own thread.
 */
final class TaggedOutput implements Runnable {

    /** Appended to a last line the stop of its rank cut short. */
    static final String CUT_MARK = " [mpiproxy: line cut]";

    private final InputStream in;
    private final OutputStream out;
    private final byte[] tag;
    private final BooleanSupplier stopped;

    /**
     * @param in      the rank's stream
     * @param out     the launcher's stream; also the lock shared by every writer
     * @param tag     e.g. {@code [0] }
     * @param stopped whether the launcher stopped the rank, asked at the stream's end
     */
    TaggedOutput(InputStream in, OutputStream out, String tag, BooleanSupplier stopped) {
        this.in = in;
        this.out = out;
        this.tag = tag.getBytes(StandardCharsets.UTF_8);
        this.stopped = stopped;
    }

    /**
     * Copies a rank's stream as it comes, untagged ({@code --raw}), on a daemon thread of its own.
     *
     * @return the started thread
     */
    static Thread raw(InputStream in, OutputStream out, String name) {
        Thread t = new Thread(() -> {
            try {
                in.transferTo(out);
            } catch (IOException e) {
                // the rank's pipe or the launcher's output broke: nothing left to copy
            }
            synchronized (out) {
                try {
                    out.flush();
                } catch (IOException e) {
                    // as above
                }
            }
        }, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    @Override
    public void run() {
        byte[] buffer = new byte[8192];
        byte[] line = new byte[256];
        int length = 0;
        try {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                for (int i = 0; i < n; i++) {
                    if (length == line.length) {
                        line = Arrays.copyOf(line, line.length * 2);
                    }
                    line[length++] = buffer[i];
                    if (buffer[i] == '\n') {
                        emit(line, length);
                        length = 0;
                    }
                }
                flush();
            }
        } catch (IOException e) {
            // the rank's pipe broke: what was read is still written below
        } finally {
            if (length > 0) {
                byte[] end = (stopped.getAsBoolean() ? CUT_MARK + "\n" : "\n").getBytes(StandardCharsets.UTF_8);
                line = Arrays.copyOf(line, length + end.length);
                System.arraycopy(end, 0, line, length, end.length);
                emit(line, length + end.length);
            }
            flush();
        }
    }

    private void emit(byte[] line, int length) {
        synchronized (out) {
            try {
                out.write(tag);
                out.write(line, 0, length);
            } catch (IOException e) {
                // the launcher's own output is closed: nothing left to tell
            }
        }
    }

    private void flush() {
        synchronized (out) {
            try {
                out.flush();
            } catch (IOException e) {
                // as in emit
            }
        }
    }
}
