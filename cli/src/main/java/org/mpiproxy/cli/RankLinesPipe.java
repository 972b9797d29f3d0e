package org.mpiproxy.cli;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * The named pipe through which rank 0 (over v2) hands the launcher the other ranks' output
 * lines, apart from its own output so that its block-buffered writes never cut into them.
 * Records are {@code O} or {@code E}, the line (already tagged), {@code \n}; each goes whole
 * to the launcher's stdout or stderr under that stream's lock. A last record without its
 * {@code \n} (rank 0 stopped while writing it) ends with {@link TaggedOutput#CUT_MARK}. Reads
 * on its own daemon thread.
 */
final class RankLinesPipe {

    private final Path pipe;
    private final OutputStream out;
    private final OutputStream err;
    private final Thread thread;

    private RankLinesPipe(Path pipe, OutputStream out, OutputStream err) {
        this.pipe = pipe;
        this.out = out;
        this.err = err;
        this.thread = new Thread(this::run, "rank-lines");
        this.thread.setDaemon(true);
    }

    /**
     * Makes the pipe (mode 0600) and starts reading it.
     *
     * @param pipe where the pipe goes (its directory exists)
     * @param out  the launcher's stdout; also its lock
     * @param err  the launcher's stderr; also its lock
     * @return the reader, or {@code null} when no pipe can be made (then rank 0 prints the lines itself)
     */
    static RankLinesPipe start(Path pipe, OutputStream out, OutputStream err) throws InterruptedException {
        try {
            Process mkfifo = new ProcessBuilder("mkfifo", "-m", "600", pipe.toString()).redirectErrorStream(true)
                    .start();
            mkfifo.getInputStream().readAllBytes();
            if (!mkfifo.waitFor(10, TimeUnit.SECONDS) || mkfifo.exitValue() != 0) {
                return null;
            }
        } catch (IOException e) {
            return null;
        }
        RankLinesPipe reader = new RankLinesPipe(pipe, out, err);
        reader.thread.start();
        return reader;
    }

    /**
     * After rank 0 has exited: lets the reader finish (it ends at the pipe's end, or is released
     * when rank 0 never opened the pipe) and waits for it.
     *
     * @param millis longest wait
     */
    void finish(long millis) throws InterruptedException {
        // opening read-write never blocks (Linux) and, closed again, ends a reader still waiting in its open
        try (RandomAccessFile release = new RandomAccessFile(pipe.toFile(), "rw")) {
            release.getFD();
        } catch (IOException e) {
            // the reader ends at its timeout below
        }
        thread.join(millis);
    }

    private void run() {
        byte[] buffer = new byte[8192];
        byte[] line = new byte[256];
        int length = 0;
        try (InputStream in = new FileInputStream(pipe.toFile())) {
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
            }
        } catch (IOException e) {
            // rank 0 is gone: what was read is written
        }
        if (length > 0) {
            byte[] end = (TaggedOutput.CUT_MARK + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8);
            line = Arrays.copyOf(line, length + end.length);
            System.arraycopy(end, 0, line, length, end.length);
            emit(line, length + end.length);
        }
    }

    private void emit(byte[] line, int length) {
        if (length < 2) {
            return;
        }
        OutputStream to = line[0] == 'E' ? err : out;
        synchronized (to) {
            try {
                to.write(line, 1, length - 1);
                to.flush();
            } catch (IOException e) {
                // the launcher's own output is closed: nothing left to tell
            }
        }
    }
}
