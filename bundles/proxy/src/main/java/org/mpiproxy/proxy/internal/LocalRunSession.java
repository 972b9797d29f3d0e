package org.mpiproxy.proxy.internal;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.function.IntConsumer;

import org.mpiproxy.api.LocalRuns;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run through the local socket (docs/protocol-v2.md 4.4), after its {@code RUN 1} line: reads
 * the front's ARG, ENV, CWD and PID frames up to GO, runs the job with {@link LocalRuns} on the
 * calling thread while another thread of the pool reads the front's SIGNAL frames, sends the run's
 * output as OUT and ERR frames and ends with EXIT. What cannot be run (a bad frame, a refusal of
 * the service) ends with one FAIL frame before anything ran, so the front may run the job itself.
 * A front that goes away while its job runs stops the job as a SIGTERM would.
 */
final class LocalRunSession {

    /** Most bytes of the frames before GO. */
    static final int MAX_SETUP_BYTES = 4 << 20;

    private static final Logger LOG = LoggerFactory.getLogger(LocalRunSession.class);

    /** What the front sent before GO. */
    private record Setup(List<String> args, Map<String, String> env, Path cwd, long pid) {
    }

    /** A frame the session refuses, in one line. */
    private static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;

        Refused(String message) {
            super(message, null, false, false);
        }
    }

    private final SocketChannel channel;
    private final ByteBuffer pending;
    private final long uid;
    private final long gid;
    private final LocalRuns runs;
    private final Executor pool;
    private final Signals signals = new Signals();
    private final Object writing = new Object();
    private volatile boolean ended;
    /** Set when a write to the front failed: the rest of the run's output is dropped. */
    private volatile boolean gone;

    /**
     * @param channel the connection, in blocking mode
     * @param pending the bytes that followed the {@code RUN 1} line
     * @param uid     the peer's uid, from the kernel
     * @param gid     the peer's gid, from the kernel
     * @param runs    runs the job
     * @param pool    runs the reader of the front's signals
     */
    LocalRunSession(SocketChannel channel, ByteBuffer pending, long uid, long gid, LocalRuns runs, Executor pool) {
        this.channel = channel;
        this.pending = pending;
        this.uid = uid;
        this.gid = gid;
        this.runs = runs;
        this.pool = pool;
    }

    /** Serves the connection to its end and closes it. */
    void serve() {
        try {
            Setup setup;
            try {
                setup = setup();
            } catch (Refused e) {
                fail(e.getMessage());
                return;
            }
            if (setup == null) {
                return;
            }
            try {
                pool.execute(this::readSignals);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                fail("the proxy is stopping; running cold");
                return;
            }
            int status;
            try {
                status = runs.run(setup.args(), setup.env(), setup.cwd(), new LocalRuns.Peer(uid, gid, setup.pid()),
                        new FrameStream(RunFrames.OUT), new FrameStream(RunFrames.ERR), signals);
            } catch (IllegalArgumentException e) {
                fail(e.getMessage() + "; running cold");
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                status = 1;
            } catch (RuntimeException e) {
                LOG.warn("a run through the local socket failed", e);
                send(RunFrames.encode(RunFrames.ERR, "mpiproxy: the run in the proxy failed: " + e + "\n"));
                status = 1;
            }
            send(RunFrames.encode(RunFrames.EXIT, new byte[] {(byte) status}, 0, 1));
        } catch (IOException e) {
            LOG.debug("a run through the local socket ended: {}", e.toString());
        } finally {
            ended = true;
            try {
                channel.close();
            } catch (IOException e) {
                // closing: nothing more to do
            }
        }
    }

    /** Stops the run as a SIGTERM of its front would (the proxy stops). */
    void stop() {
        signals.deliver(15);
    }

    /** @return the frames up to GO, {@code null} when the front left first */
    private Setup setup() throws IOException, Refused {
        List<String> args = new ArrayList<>();
        Map<String, String> env = new LinkedHashMap<>();
        Path cwd = null;
        long pid = 0;
        long bytes = 0;
        while (true) {
            RunFrames.Frame f = RunFrames.read(pending, channel);
            if (f == null) {
                return null;
            }
            bytes += RunFrames.HEADER + f.body().length;
            if (bytes > MAX_SETUP_BYTES) {
                throw new Refused("the arguments and environment are longer than " + MAX_SETUP_BYTES + " bytes");
            }
            switch (f.type()) {
                case RunFrames.ARG -> args.add(f.text());
                case RunFrames.ENV -> {
                    String v = f.text();
                    int eq = v.indexOf('=');
                    if (eq <= 0) {
                        throw new Refused("an ENV frame is not NAME=value");
                    }
                    env.put(v.substring(0, eq), v.substring(eq + 1));
                }
                case RunFrames.CWD -> cwd = path(f.text());
                case RunFrames.PID -> pid = pid(f.text());
                case RunFrames.GO -> {
                    if (cwd == null || pid == 0 || args.isEmpty()) {
                        throw new Refused("GO before ARG, CWD and PID");
                    }
                    return new Setup(args, env, cwd, pid);
                }
                default -> throw new Refused("unknown frame type 0x" + Integer.toHexString(f.type() & 0xff)
                        + " before GO");
            }
        }
    }

    private static Path path(String text) throws Refused {
        try {
            Path p = Path.of(text);
            if (p.isAbsolute()) {
                return p;
            }
        } catch (InvalidPathException e) {
            // refused below
        }
        throw new Refused("CWD is not an absolute path");
    }

    private static long pid(String text) throws Refused {
        try {
            long pid = Long.parseLong(text);
            if (pid > 0) {
                return pid;
            }
        } catch (NumberFormatException e) {
            // refused below
        }
        throw new Refused("PID is not a process id");
    }

    /** Reads the front's SIGNAL frames until the connection ends; a front gone first stops the run. */
    private void readSignals() {
        try {
            RunFrames.Frame f;
            while ((f = RunFrames.read(pending, channel)) != null) {
                if (f.type() == RunFrames.SIGNAL && f.body().length == 1) {
                    int n = f.body()[0] & 0xff;
                    if (n == 2 || n == 15) {
                        signals.deliver(n);
                    }
                }
            }
        } catch (IOException e) {
            // closed at the run's end, or the front broke the stream
        }
        if (!ended) {
            signals.deliver(15);
        }
    }

    private void fail(String line) throws IOException {
        send(RunFrames.encode(RunFrames.FAIL, line.replace('\n', ' ')));
    }

    private void send(ByteBuffer frame) throws IOException {
        synchronized (writing) {
            RunFrames.write(channel, frame);
        }
    }

    /** The run's output to the front, a frame per write. */
    private final class FrameStream extends OutputStream {
        private final byte type;

        FrameStream(byte type) {
            this.type = type;
        }

        @Override
        public void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            for (int at = off; at < off + len && !gone; at += RunFrames.MAX_BODY) {
                try {
                    send(RunFrames.encode(type, b, at, Math.min(RunFrames.MAX_BODY, off + len - at)));
                } catch (IOException e) {
                    gone = true; // the front is gone: the run goes on to its end without it
                }
            }
        }
    }

    /** The front's signals, kept until the run listens. */
    private static final class Signals implements LocalRuns.Signals {
        private final List<Integer> early = new ArrayList<>();
        private IntConsumer handler;

        @Override
        public void listen(IntConsumer handler) {
            List<Integer> replay;
            synchronized (this) {
                this.handler = handler;
                replay = List.copyOf(early);
                early.clear();
            }
            replay.forEach(handler::accept);
        }

        void deliver(int signal) {
            IntConsumer h;
            synchronized (this) {
                h = handler;
                if (h == null) {
                    early.add(signal);
                    return;
                }
            }
            h.accept(signal);
        }
    }
}
