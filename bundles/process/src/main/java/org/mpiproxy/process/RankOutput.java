package org.mpiproxy.process;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.mpiproxy.api.RankOutputListener;

/**
 * Reads one output stream of a rank (a pipe or a FIFO), cuts it into whole lines, appends them to
 * the rank's log file up to a size cap, and hands each line to a {@link RankOutputListener}. A line
 * is complete at {@code '\n'} (a preceding {@code '\r'} is dropped), or when it reaches
 * {@link #MAX_LINE_BYTES}, or at the end of the stream; in raw mode whatever has arrived is passed
 * on at once. Bytes are read until the stream ends, even past the cap, so a rank never blocks on a
 * full pipe for long.
 * <p>
 * A stream with a descriptor (the pipes {@link NativeSpawn} makes, {@link RankFifos}) is read by the
 * proxy's one {@link OutputPoller} thread, together with every other rank's, at a bounded rate per
 * stream; any other stream, or every stream where {@code epoll} cannot be used, on a daemon thread
 * of its own while it is open.
 */
public final class RankOutput {

    /** Longest line delivered whole; longer lines are delivered in pieces of this size. */
    public static final int MAX_LINE_BYTES = 64 * 1024;

    private static final String IDLE_NAME = "mpiproxy-output-idle";
    /** The log file is written once per read, not once per line. */
    private static final int LOG_BUFFER_BYTES = 16 * 1024;

    /**
     * The threads that read ranks' streams: one per stream while it is open, but a
     * thread that finished a stream serves the next one instead of ending, so a launch
     * (two streams) hands its pipes to waiting threads instead of creating two threads, which
     * on a loaded machine costs a scheduling round each. Idle threads end after 30 s.
     */
    private static final ThreadPoolExecutor PUMPS = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30,
            TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
                Thread thread = new Thread(r, IDLE_NAME);
                thread.setDaemon(true);
                return thread;
            });

    private final InputStream in;
    private final Path file;
    private final long capBytes;
    private final boolean raw;
    private final long jobId;
    private final int rankId;
    private final RankOutputListener.Stream stream;
    private final RankOutputListener listener;
    private final CompletableFuture<Long> done = new CompletableFuture<>();
    /** Set when the stream was detached ({@link #detachAll}) rather than ended. */
    private volatile boolean detached;
    private byte[] line = new byte[256];
    private int lineLength;
    private long written;
    private boolean capped;
    private long total;
    private OutputStream log;
    private IOException unwritable;

    private RankOutput(InputStream in, Path file, long capBytes, boolean raw, long jobId, int rankId,
                       RankOutputListener.Stream stream, RankOutputListener listener) {
        this.in = in;
        this.file = file;
        this.capBytes = capBytes;
        this.raw = raw;
        this.jobId = jobId;
        this.rankId = rankId;
        this.stream = stream;
        this.listener = listener;
    }

    /** The outputs being read from FIFOs, by {@link #key}: what {@link #detachAll} detaches. */
    private static final java.util.Map<String, RankOutput> FIFO_OUTPUTS = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * @return the key of a stream in {@link #detachAll}'s result: {@code <job hex>/<rank>/out} or {@code /err}
     */
    public static String key(long jobId, int rankId, RankOutputListener.Stream stream) {
        return RankCommand.jobIdHex(jobId) + "/" + rankId + (stream == RankOutputListener.Stream.STDOUT ? "/out" : "/err");
    }

    /** @return the FIFOs being read now */
    public static java.util.List<Path> fifos() {
        java.util.List<Path> paths = new java.util.ArrayList<>();
        for (RankOutput o : FIFO_OUTPUTS.values()) {
            paths.add(((RankFifos.FifoInputStream) o.in).path());
        }
        return paths;
    }

    /**
     * Stops reading every stream that is a FIFO ({@link RankFifos}) without losing a byte: what a
     * stream has not read stays in its FIFO, for whoever opens it next; the start of a line read but
     * not complete is returned. The streams' ends are not reported to the listeners (the ranks run
     * on). For a JVM that ends while its ranks run on (a restart of the node).
     *
     * @param wait longest wait for the readers to stop
     * @return the incomplete line of each stream that had one, by {@link #key}
     */
    public static java.util.Map<String, byte[]> detachAll(java.time.Duration wait) {
        java.util.List<RankOutput> outputs = new java.util.ArrayList<>(FIFO_OUTPUTS.values());
        for (RankOutput o : outputs) {
            o.detached = true;
            ((RankFifos.FifoInputStream) o.in).detach();
        }
        long deadline = System.nanoTime() + wait.toNanos();
        java.util.Map<String, byte[]> partial = new java.util.HashMap<>();
        for (RankOutput o : outputs) {
            try {
                o.done.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                continue;
            }
            if (o.lineLength > 0) {
                partial.put(key(o.jobId, o.rankId, o.stream), Arrays.copyOf(o.line, o.lineLength));
            }
        }
        return partial;
    }

    /**
     * As {@link #start(InputStream, Path, long, boolean, long, int, RankOutputListener.Stream,
     * RankOutputListener)}, continuing a line an earlier reader of the same stream began.
     *
     * @param begun the start of the current line ({@link #detachAll}), or {@code null}
     */
    public static CompletableFuture<Long> resume(InputStream in, Path file, long capBytes, boolean raw, long jobId,
                                                 int rankId, RankOutputListener.Stream stream,
                                                 RankOutputListener listener, byte[] begun) {
        return start(in, file, capBytes, raw, jobId, rankId, stream, listener, begun);
    }

    /**
     * Starts reading a stream: by the {@link OutputPoller} when it has a descriptor, else on a
     * daemon thread named after the stream while it reads it (an idle one left by an earlier
     * stream, or a new one).
     *
     * @param in       the rank's stream (a pipe); closed at its end
     * @param file     the log file, appended to (created when missing, owner-only: {@link RankLogFiles});
     *                 when it cannot be opened so, the stream is still read, and the result completes
     *                 exceptionally with the reason at its end
     * @param capBytes most bytes appended to the file by this stream; then one marker line
     * @param raw      pass text on as it arrives instead of whole lines
     * @param jobId    the job, for the listener
     * @param rankId   the rank, for the listener
     * @param stream   which stream, for the listener
     * @param listener receives the lines; {@code null} for none
     * @return completes with the number of bytes read when the stream has ended
     */
    public static CompletableFuture<Long> start(InputStream in, Path file, long capBytes, boolean raw, long jobId,
                                                int rankId, RankOutputListener.Stream stream,
                                                RankOutputListener listener) {
        return start(in, file, capBytes, raw, jobId, rankId, stream, listener, null);
    }

    private static CompletableFuture<Long> start(InputStream in, Path file, long capBytes, boolean raw, long jobId,
                                                 int rankId, RankOutputListener.Stream stream,
                                                 RankOutputListener listener, byte[] begun) {
        return start(in, file, capBytes, raw, jobId, rankId, stream, listener, begun,
                in instanceof OutputPoller.Source ? OutputPoller.shared() : null);
    }

    /**
     * As {@link #resume}, read by {@code poller} when the stream has a descriptor, else on a thread of
     * its own.
     *
     * @param poller reads the stream, {@code null} for a thread of its own
     */
    static CompletableFuture<Long> start(InputStream in, Path file, long capBytes, boolean raw, long jobId,
                                         int rankId, RankOutputListener.Stream stream,
                                         RankOutputListener listener, byte[] begun, OutputPoller poller) {
        RankOutput output = new RankOutput(in, file, capBytes, raw, jobId, rankId, stream, listener);
        if (begun != null && begun.length > 0) {
            output.append(begun, 0, begun.length);
        }
        if (in instanceof RankFifos.FifoInputStream) {
            String key = key(jobId, rankId, stream);
            FIFO_OUTPUTS.put(key, output);
            output.done.whenComplete((n, e) -> FIFO_OUTPUTS.remove(key, output));
        }
        if (poller != null && in instanceof OutputPoller.Source) {
            poller.read((OutputPoller.Source) in, output);
            return output.done;
        }
        String name = "mpiproxy-output-" + RankCommand.jobIdHex(jobId) + "-" + rankId
                + "-" + stream.name().toLowerCase(java.util.Locale.ROOT);
        PUMPS.execute(() -> {
            Thread thread = Thread.currentThread();
            thread.setName(name);
            try {
                output.run();
            } finally {
                thread.setName(IDLE_NAME);
            }
        });
        return output.done;
    }

    /** Reads the stream to its end on this thread. */
    private void run() {
        open();
        byte[] buffer = new byte[16 * 1024];
        try (InputStream input = in) {
            int n;
            while ((n = input.read(buffer)) > 0) {
                accept(buffer, n);
            }
        } catch (IOException | RuntimeException e) {
            fail(e);
            return;
        }
        finish();
    }

    /**
     * Opens the log file; when it cannot be opened owner-only, the stream is still read, and the
     * result completes exceptionally with the reason at its end.
     */
    void open() {
        try {
            log = new BufferedOutputStream(RankLogFiles.append(file), LOG_BUFFER_BYTES);
        } catch (IOException e) {
            // the rank's output is still drained (a full pipe would stop the rank) and listened to
            unwritable = e;
            log = OutputStream.nullOutputStream();
        }
    }

    /**
     * Cuts bytes read into lines, passes the whole ones on and writes them to the log file.
     *
     * @return the lines (and pieces) passed on
     * @throws IOException when the log file cannot be written
     */
    int accept(byte[] buffer, int n) throws IOException {
        total += n;
        int emitted = 0;
        int start = 0;
        for (int i = 0; i < n; i++) {
            if (buffer[i] == '\n') {
                append(buffer, start, i - start);
                emit(log, false);
                emitted++;
                start = i + 1;
            } else if (lineLength + (i - start) + 1 >= MAX_LINE_BYTES) {
                append(buffer, start, i + 1 - start);
                emit(log, true);
                emitted++;
                start = i + 1;
            }
        }
        append(buffer, start, n - start);
        if (raw && lineLength > 0) {
            emit(log, true);
            emitted++;
        }
        log.flush();
        return emitted;
    }

    /**
     * At the stream's end (the stream is closed): passes the last, incomplete line on, reports the
     * end and completes. After a detach, keeps the begun line and reports nothing: the rank runs on.
     */
    void finish() {
        try (OutputStream out = log) {
            if (detached) {
                // the rank runs on: the begun line and the stream's end belong to the next reader
                out.flush();
                done.complete(total);
                return;
            }
            if (lineLength > 0) {
                emit(out, true);
            }
            out.flush();
        } catch (IOException | RuntimeException e) {
            fail(e);
            return;
        }
        if (in instanceof RankFifos.FifoInputStream) {
            // nobody writes it any more
            ((RankFifos.FifoInputStream) in).removePath();
        }
        ended();
        if (unwritable != null) {
            done.completeExceptionally(unwritable);
        } else {
            done.complete(total);
        }
    }

    /** The stream or the log failed (the stream is closed): reports the end and completes with the failure. */
    void fail(Exception e) {
        try {
            log.close();
        } catch (IOException | RuntimeException ignored) {
            // failed already
        }
        ended();
        done.completeExceptionally(e);
    }

    private void ended() {
        if (listener != null) {
            try {
                listener.onEnd(jobId, rankId, stream);
            } catch (RuntimeException e) {
                Thread thread = Thread.currentThread();
                thread.getUncaughtExceptionHandler().uncaughtException(thread, e);
            }
        }
    }

    private void append(byte[] bytes, int offset, int length) {
        if (lineLength + length > line.length) {
            line = Arrays.copyOf(line, Math.max(line.length * 2, lineLength + length));
        }
        System.arraycopy(bytes, offset, line, lineLength, length);
        lineLength += length;
    }

    /** Writes the collected text to the file (with a newline unless partial) and the listener. */
    private void emit(OutputStream out, boolean partial) throws IOException {
        int length = lineLength;
        if (!partial && length > 0 && line[length - 1] == '\r') {
            length--;
        }
        long bytes = lineLength + (partial ? 0 : 1);
        if (!capped && written + bytes <= capBytes) {
            out.write(line, 0, lineLength);
            if (!partial) {
                out.write('\n');
            }
            written += bytes;
        } else if (!capped) {
            capped = true;
            out.write(("[mpiproxy: output capped at " + capBytes + " bytes]\n").getBytes(StandardCharsets.UTF_8));
        }
        lineLength = 0;
        if (listener != null) {
            try {
                listener.onOutput(jobId, rankId, stream, new String(line, 0, length, StandardCharsets.UTF_8), partial);
            } catch (RuntimeException e) {
                // a failing listener must not stop the rank's output from being drained
                Thread thread = Thread.currentThread();
                thread.getUncaughtExceptionHandler().uncaughtException(thread, e);
            }
        }
    }
}
