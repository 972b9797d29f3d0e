package org.mpiproxy.process;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

import com.sun.jna.Memory;

/**
 * Reads the output of every rank on one thread ({@value #THREAD_NAME}, an {@link EpollLoop}): each
 * stream's descriptor (a pipe or a FIFO, made non-blocking) is in one {@code epoll} set, and each
 * time it is ready at most {@value #READ_BUDGET} bytes are read from it before the next ready
 * stream has its turn. The bytes go to the stream's {@link RankOutput}, which cuts them into lines.
 * <p>
 * A flood of output costs a bounded share of the thread: each stream is read at most at a rate in
 * bytes per second ({@value #RATE_PROPERTY}, 32 MiB/s by default), a line counting
 * {@value #LINE_CHARGE} bytes more than its length (handing a line on costs more than its bytes),
 * measured in slices of {@value #SLICE_MILLIS} ms with at most one slice's worth saved up. A stream that has used its share is taken out of the set until a later
 * slice gives it more, so its rank blocks on its full pipe, as behind a slow reader: it is slowed,
 * and nothing it writes is lost.
 * <p>
 * {@link #shared()} is the proxy's poller, or {@code null} where {@code epoll} cannot be used (then
 * each stream is read on a thread of its own, as {@link RankOutput} says). Thread-safe.
 */
final class OutputPoller {

    /** The name of the poller's thread. */
    static final String THREAD_NAME = "mpiproxy-output-poller";
    /** The system property with the bytes per second each stream may write, 32 MiB when unset. */
    static final String RATE_PROPERTY = "mpiproxy.output.rate";
    /** The system property that turns the poller off ({@code false}): a thread per stream. */
    static final String ENABLE_PROPERTY = "mpiproxy.output.epoll";
    static final long DEFAULT_RATE = 32L << 20;
    /** Most bytes read from one stream each time it is ready. */
    static final int READ_BUDGET = 64 * 1024;
    /** What a line costs beyond its bytes, in bytes of the rate. */
    static final int LINE_CHARGE = 64;
    static final int SLICE_MILLIS = 100;
    private static final long SLICE_NANOS = SLICE_MILLIS * 1_000_000L;
    /** Quiet time after which a stream that ends when empty ({@link Source#endsWhenEmpty()}) has ended. */
    private static final long EMPTY_NANOS = 200_000_000L;

    /** A stream read through its descriptor. */
    interface Source {
        /** @return the descriptor */
        int fd();

        /** Closes the descriptor. */
        void close() throws IOException;

        /** @return whether reading must stop now, leaving the rest unread (a FIFO detached) */
        default boolean detached() {
            return false;
        }

        /** @return whether nothing left to read is the end (a FIFO whose rank has ended) */
        default boolean endsWhenEmpty() {
            return false;
        }

        /** @param change runs (on any thread) when {@link #detached()} or {@link #endsWhenEmpty()} turns true */
        default void whenChanged(Runnable change) {
        }
    }

    /** Makes the epoll functions, or says why they cannot be had. */
    @FunctionalInterface
    interface Opener {
        Epoll open() throws IOException;
    }

    private static final class Shared {
        static final OutputPoller INSTANCE = open(Epoll::load, rate(System.getProperty(RATE_PROPERTY)),
                System::nanoTime, why -> System.getLogger(OutputPoller.class.getName())
                        .log(System.Logger.Level.WARNING, why));
    }

    private final Epoll epoll;
    private final EpollLoop loop;
    private final LongSupplier clock;
    private final long sliceBytes;
    private final Memory buffer = new Memory(READ_BUDGET);
    private final byte[] bytes = new byte[READ_BUDGET];
    /** Streams out of the set until a later slice; the loop's thread only. */
    private final List<Reading> paused = new ArrayList<>();
    /** Streams that end once nothing is left to read; the loop's thread only. */
    private final List<Reading> endingWhenEmpty = new ArrayList<>();
    private volatile Runnable onPause = () -> { };

    /**
     * @param epoll the functions
     * @param name  its thread's name
     * @param rate  the bytes per second each stream may write
     * @param clock nanoseconds, as {@link System#nanoTime()}
     * @throws IOException when the epoll set cannot be made
     */
    OutputPoller(Epoll epoll, String name, long rate, LongSupplier clock) throws IOException {
        if (rate <= 0) {
            throw new IllegalArgumentException("rate=" + rate + " must be > 0");
        }
        this.epoll = epoll;
        this.loop = new EpollLoop(epoll, name);
        this.clock = clock;
        this.sliceBytes = Math.max(1, (long) (rate * (SLICE_NANOS / 1e9)));
        loop.tick(this::tick);
    }

    /** @return the proxy's poller, or {@code null} when streams are read on threads of their own */
    static OutputPoller shared() {
        if ("false".equalsIgnoreCase(System.getProperty(ENABLE_PROPERTY, "").trim())) {
            return null;
        }
        try {
            return Shared.INSTANCE;
        } catch (LinkageError e) {
            return null;
        }
    }

    /**
     * @param opener makes the epoll functions
     * @param rate   the bytes per second each stream may write
     * @param clock  nanoseconds
     * @param warn   gets the one warning when there is no poller
     * @return a poller, or {@code null} when epoll cannot be used here
     */
    static OutputPoller open(Opener opener, long rate, LongSupplier clock, Consumer<String> warn) {
        try {
            return new OutputPoller(opener.open(), THREAD_NAME, rate, clock);
        } catch (IOException | LinkageError e) {
            warn.accept("rank output is read on a thread per stream: " + e.getMessage());
            return null;
        }
    }

    /** @return the rate in bytes per second a property gives, {@link #DEFAULT_RATE} when it is unset or bad */
    static long rate(String property) {
        try {
            long rate = property == null || property.isBlank() ? DEFAULT_RATE : Long.parseLong(property.trim());
            return rate > 0 ? rate : DEFAULT_RATE;
        } catch (NumberFormatException e) {
            return DEFAULT_RATE;
        }
    }

    /**
     * Starts reading a stream; its log file is opened on the poller's thread.
     *
     * @param in     the stream
     * @param output what cuts its bytes into lines
     */
    void read(Source in, RankOutput output) {
        loop.execute(() -> new Reading(in, output).start());
    }

    /** @param onPause runs on the poller's thread each time a stream is taken out of the set */
    void onPause(Runnable onPause) {
        this.onPause = onPause;
    }

    /** @return completes on the poller's thread once everything handed to it before has run */
    CompletableFuture<Integer> paused() {
        CompletableFuture<Integer> result = new CompletableFuture<>();
        loop.execute(() -> result.complete(paused.size()));
        return result;
    }

    /** Before each wait: gives paused streams their next slice, ends quiet streams that end when empty. */
    private int tick() {
        long now = clock.getAsLong();
        int timeout = -1;
        for (int i = paused.size() - 1; i >= 0; i--) {
            Reading r = paused.get(i);
            if (r.refill(now) > 0) {
                paused.remove(i);
                r.resume();
            } else {
                timeout = 1 + (int) ((SLICE_NANOS - Math.floorMod(now, SLICE_NANOS)) / 1_000_000L);
            }
        }
        for (int i = endingWhenEmpty.size() - 1; i >= 0; i--) {
            Reading r = endingWhenEmpty.get(i);
            if (r.ended) {
                endingWhenEmpty.remove(i);
            } else if (now - r.quietSince >= EMPTY_NANOS && !paused.contains(r)) {
                r.readOrEnd();
            }
            if (!r.ended) {
                int wait = 1 + (int) (Math.max(0, EMPTY_NANOS - (now - r.quietSince)) / 1_000_000L);
                timeout = timeout < 0 ? wait : Math.min(timeout, wait);
            }
        }
        return timeout;
    }

    /** One stream being read. The loop's thread only. */
    private final class Reading implements EpollLoop.Handler {
        private final Source in;
        private final RankOutput output;
        private final int fd;
        private long tokens = sliceBytes;
        private long slice;
        private long quietSince;
        private boolean ended;

        Reading(Source in, RankOutput output) {
            this.in = in;
            this.output = output;
            this.fd = in.fd();
        }

        void start() {
            slice = clock.getAsLong() / SLICE_NANOS;
            output.open();
            try {
                epoll.nonBlocking(fd);
                loop.add(fd, this);
            } catch (IOException e) {
                ended = true;
                close();
                output.fail(e);
                return;
            }
            // made now: a detach may come after this bundle was refreshed, when no class loads any more
            Runnable changed = this::changed;
            in.whenChanged(() -> loop.execute(changed));
            changed();
        }

        @Override
        public void ready(int events) {
            long now = clock.getAsLong();
            if (refill(now) <= 0) {
                pause();
                return;
            }
            long n = epoll.read(fd, buffer, Math.min(READ_BUDGET, tokens));
            if (n > 0) {
                take((int) n, now);
                if (!ended && tokens <= 0) {
                    pause();
                }
            } else if (n == 0) {
                end();
            } else if (n != -Epoll.EAGAIN && n != -Epoll.EINTR) {
                fail(new IOException("read: " + epoll.strerror((int) -n)));
            }
        }

        /** @return the bytes this stream may read now */
        long refill(long now) {
            long current = now / SLICE_NANOS;
            if (current > slice) {
                long gained = (current - slice) > Long.MAX_VALUE / sliceBytes ? Long.MAX_VALUE
                        : (current - slice) * sliceBytes;
                tokens = tokens > sliceBytes - gained ? sliceBytes : tokens + gained;
                slice = current;
            }
            return tokens;
        }

        private void take(int n, long now) {
            buffer.read(0, bytes, 0, n);
            quietSince = now;
            try {
                int lines = output.accept(bytes, n);
                tokens -= n + (long) lines * LINE_CHARGE;
            } catch (IOException | RuntimeException e) {
                fail(e);
            }
        }

        private void pause() {
            loop.remove(fd);
            paused.add(this);
            onPause.run();
        }

        void resume() {
            try {
                loop.add(fd, this);
            } catch (IOException e) {
                fail(e);
            }
        }

        /** A detach or the rank's end, told by the stream. */
        void changed() {
            if (ended) {
                return;
            }
            if (in.detached()) {
                // the rest stays in the FIFO for the next reader
                stop();
                output.finish();
            } else if (in.endsWhenEmpty() && !endingWhenEmpty.contains(this)) {
                quietSince = clock.getAsLong();
                endingWhenEmpty.add(this);
            }
        }

        /** For a stream that ends when empty, once it has been quiet a while. */
        void readOrEnd() {
            long n = epoll.read(fd, buffer, Math.min(READ_BUDGET, Math.max(1, tokens)));
            if (n > 0) {
                take((int) n, clock.getAsLong());
            } else if (n == 0 || n == -Epoll.EAGAIN) {
                end();
            } else if (n != -Epoll.EINTR) {
                fail(new IOException("read: " + epoll.strerror((int) -n)));
            }
        }

        private void end() {
            stop();
            output.finish();
        }

        private void fail(Exception e) {
            if (!ended) {
                stop();
                output.fail(e);
            }
        }

        private void stop() {
            ended = true;
            loop.remove(fd);
            paused.remove(this);
            endingWhenEmpty.remove(this);
            close();
        }

        private void close() {
            try {
                in.close();
            } catch (IOException e) {
                // the descriptor is gone either way
            }
        }
    }
}
