package org.mpiproxy.transport.udp.internal;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

import org.mpiproxy.api.DatagramHandler;
import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.Doorbell;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One non-blocking UDP socket whose receive thread is the datagram handler's duty cycle. The
 * thread is supervised ({@link ReceiveSupervision}): a failure in the handler costs the datagram
 * or pass that met it, and a thread that dies anyway is restarted.
 */
public final class UdpTransport implements DatagramTransport, AutoCloseable {

    /** Name of the receive thread. */
    public static final String THREAD_NAME = "mpiproxy-udp-receive";

    /**
     * Longest sleep while every ring the handler waits on rings this socket's doorbell (a
     * safety net: a lost doorbell costs at most this).
     */
    static final long RUNG_WAIT_MILLIS = 250;

    /**
     * Longest sleep while no handler is bound: datagrams then wait in the socket, for the next
     * handler (a proxy being updated takes over its predecessor's jobs), and {@link #wakeup}
     * ends the sleep when one binds.
     */
    static final long NO_HANDLER_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    /** Most datagrams received in one pass before the handler's {@code doWork} runs. */
    static final int RECEIVE_BATCH = 32;

    private static final Logger LOG = LoggerFactory.getLogger(UdpTransport.class);
    private static final long ERROR_LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final String PASS = "a pass of the handler's work";

    private final DatagramChannel channel;
    private final Selector selector;
    private final Supplier<DatagramHandler> handlers;
    private final int maxDatagramSize;
    private final InetSocketAddress localAddress;
    private final ReceiveSupervision supervision;
    /** The receive thread now; replaced when a dead one is restarted (under {@link #threads}). */
    private volatile Thread thread;
    private final Object threads = new Object();
    private volatile boolean running = true;

    private final LongAdder datagramsIn = new LongAdder();
    private final LongAdder bytesIn = new LongAdder();
    private final LongAdder datagramsOut = new LongAdder();
    private final LongAdder bytesOut = new LongAdder();
    private final LongAdder sendFailures = new LongAdder();
    private final LongAdder doorbellWaits = new LongAdder();
    /** Held by the receive thread while it is inside the handler (one pass of its loop). */
    private final ReentrantLock pass = new ReentrantLock();
    private final long doorbell;
    private volatile long lastSendErrorLog = System.nanoTime() - ERROR_LOG_INTERVAL_NANOS;

    /**
     * Binds the socket and starts the receive thread.
     *
     * @param settings the socket settings
     * @param handlers yields the current handler, or {@code null} when none is bound; read once
     *                 per pass of the receive loop
     * @throws IOException when the socket cannot be opened or bound
     */
    public UdpTransport(UdpTransportSettings settings, Supplier<DatagramHandler> handlers) throws IOException {
        this(settings, handlers, new ReceiveSupervision(), true);
    }

    /**
     * Binds the socket and starts the receive thread, supervised by {@code supervision}.
     *
     * @param settings    the socket settings
     * @param handlers    yields the current handler, or {@code null} when none is bound
     * @param supervision watches the receive thread and restarts it when it dies
     * @throws IOException when the socket cannot be opened or bound
     */
    public UdpTransport(UdpTransportSettings settings, Supplier<DatagramHandler> handlers,
                        ReceiveSupervision supervision) throws IOException {
        this(settings, handlers, supervision, true);
    }

    /**
     * Binds the socket; its receive thread starts with {@link #start()}. A transport that
     * replaces another is bound first (so that a bad address leaves the old one serving), and
     * started only once the old one's receive thread has stopped: the handler is driven by one
     * thread at a time.
     *
     * @param settings the socket settings
     * @param handlers yields the current handler, or {@code null} when none is bound
     * @return the bound, not yet started transport
     * @throws IOException when the socket cannot be opened or bound
     */
    static UdpTransport bind(UdpTransportSettings settings, Supplier<DatagramHandler> handlers) throws IOException {
        return new UdpTransport(settings, handlers, new ReceiveSupervision(), false);
    }

    private UdpTransport(UdpTransportSettings settings, Supplier<DatagramHandler> handlers,
                         ReceiveSupervision supervision, boolean start) throws IOException {
        this.handlers = handlers;
        this.supervision = supervision;
        this.maxDatagramSize = settings.maxDatagramSize();
        InetSocketAddress bind = settings.bindAddress();
        DatagramChannel ch = bind.getAddress() instanceof java.net.Inet4Address
                ? DatagramChannel.open(StandardProtocolFamily.INET)
                : DatagramChannel.open();
        Selector sel = null;
        try {
            ch.setOption(StandardSocketOptions.SO_RCVBUF, settings.receiveBufferSize());
            ch.setOption(StandardSocketOptions.SO_SNDBUF, settings.sendBufferSize());
            ch.bind(bind);
            ch.configureBlocking(false);
            sel = Selector.open();
            ch.register(sel, SelectionKey.OP_READ);
        } catch (IOException | RuntimeException e) {
            ch.close();
            if (sel != null) {
                sel.close();
            }
            throw e;
        }
        this.channel = ch;
        this.selector = sel;
        this.localAddress = (InetSocketAddress) ch.getLocalAddress();
        this.doorbell = Doorbell.encode(localAddress);
        this.thread = newReceiveThread();
        if (start) {
            start();
        }
    }

    /** Takes over the bound socket of {@code predecessor}, with a receive loop of the new settings. */
    private UdpTransport(UdpTransport predecessor, UdpTransportSettings settings) {
        this.handlers = predecessor.handlers;
        this.supervision = new ReceiveSupervision();
        this.maxDatagramSize = settings.maxDatagramSize();
        this.channel = predecessor.channel;
        this.selector = predecessor.selector;
        this.localAddress = predecessor.localAddress;
        this.doorbell = predecessor.doorbell;
        this.thread = newReceiveThread();
    }

    /**
     * Applies settings for the same bind address to the bound socket, which stays open: its
     * buffer sizes are set in place, and the returned transport, not yet started, owns the
     * socket with a receive loop for the new largest datagram. Binding a second socket to the
     * address would fail while this one holds it, and closing this one first would lose what
     * is queued in it. The caller stops this transport, then starts the returned one, and
     * never closes this one: the socket now belongs to the successor.
     *
     * @param settings settings whose {@link UdpTransportSettings#bindAddress()} is the one this
     *                 socket was bound for
     * @return the successor, not yet started
     * @throws IOException when a buffer size cannot be set; this transport is then unchanged
     *                     but for the buffer sizes already set, and keeps serving
     */
    UdpTransport reconfigured(UdpTransportSettings settings) throws IOException {
        channel.setOption(StandardSocketOptions.SO_RCVBUF, settings.receiveBufferSize());
        channel.setOption(StandardSocketOptions.SO_SNDBUF, settings.sendBufferSize());
        return new UdpTransport(this, settings);
    }

    private Thread newReceiveThread() {
        // One more byte than the largest accepted datagram: a longer one arrives truncated to
        // this size, so the handler sees it is too long instead of reading a cut-off message.
        ByteBuffer receiveBuffer = ByteBuffer.allocateDirect(maxDatagramSize + 1).order(ByteOrder.LITTLE_ENDIAN);
        Thread t = new Thread(() -> run(receiveBuffer), THREAD_NAME);
        t.setDaemon(true);
        return t;
    }

    /** Starts the receive thread of a transport made by {@link #bind}. */
    void start() {
        thread.start();
        LOG.info("UDP transport listening on {}", localAddress);
    }

    private void run(ByteBuffer buffer) {
        try {
            receiveLoop(buffer);
        } catch (Throwable fatal) {
            // only what the loop does not survive reaches here: the thread ends, and is restarted
            supervision.died(THREAD_NAME + " on " + localAddress, fatal, running ? this::restart : null);
        }
    }

    /** Starts a new receive thread after a death, unless the transport stopped meanwhile; any thread. */
    private void restart() {
        synchronized (threads) {
            if (!running || supervision.death() == null) {
                return;
            }
            Thread t = newReceiveThread();
            thread = t;
            supervision.restarted();
            t.start();
        }
        LOG.info("UDP receive loop on {}: restarted ({} restarts)", localAddress, supervision.restarts());
    }

    private void receiveLoop(ByteBuffer buffer) {
        Backoff backoff = new Backoff();
        while (running) {
            try {
                DatagramHandler handler;
                int work = 0;
                boolean pending = false;
                int sleep = DatagramHandler.SLEEP_AS_USUAL;
                // one pass through the handler under the pass lock: releasing the handler waits for it
                pass.lock();
                supervision.enter();
                try {
                    handler = handlers.get();
                    if (handler != null) {
                        work = receiveBatch(buffer, handler) + handler.doWork(this);
                        if (work == 0) {
                            pending = handler.hasPendingWork();
                            if (pending && backoff.sleepsLongNext()) {
                                sleep = handler.armDoorbells(doorbell, this);
                            }
                        }
                    }
                } finally {
                    supervision.leave();
                    pass.unlock();
                }
                supervision.served();
                if (handler == null) {
                    LockSupport.parkNanos(NO_HANDLER_WAIT_NANOS);
                } else if (work > 0) {
                    backoff.reset();
                } else if (pending) {
                    if (sleep == DatagramHandler.DO_NOT_SLEEP) {
                        continue;
                    }
                    if (sleep == DatagramHandler.SLEEP_UNTIL_RUNG) {
                        // every ring waited on rings this socket: the timeout is only a safety net
                        doorbellWaits.increment();
                        selector.select(RUNG_WAIT_MILLIS);
                        selector.selectedKeys().clear();
                        continue;
                    }
                    backoff.idle(selector);
                } else {
                    backoff.reset();
                    selector.select();
                    selector.selectedKeys().clear();
                }
            } catch (ClosedChannelException | ClosedSelectorException e) {
                if (running) {
                    supervision.died(THREAD_NAME + " on " + localAddress, e, null);
                    running = false;
                }
            } catch (Throwable t) {
                if (!ReceiveSupervision.survivable(t)) {
                    throw (VirtualMachineError) t;
                }
                supervision.failed(PASS, t);
            }
        }
    }

    private int receiveBatch(ByteBuffer buffer, DatagramHandler handler) throws IOException {
        int received = 0;
        while (received < RECEIVE_BATCH) {
            buffer.clear();
            SocketAddress source = channel.receive(buffer);
            if (source == null) {
                break;
            }
            buffer.flip();
            received++;
            datagramsIn.increment();
            bytesIn.add(buffer.remaining());
            try {
                handler.onDatagram(buffer, (InetSocketAddress) source, this);
            } catch (Throwable t) {
                if (!ReceiveSupervision.survivable(t)) {
                    throw (VirtualMachineError) t;
                }
                // the datagram that met the failure is lost, the rest of the batch is served
                failedOn(source, t);
            }
        }
        return received;
    }

    private void failedOn(SocketAddress source, Throwable t) {
        supervision.failed("the handler, on a datagram from " + source, t);
    }

    @Override
    public boolean send(ByteBuffer datagram, InetSocketAddress target) {
        int length = datagram.remaining();
        try {
            if (channel.send(datagram, target) == 0) {
                sendFailures.increment();
                return false;
            }
        } catch (IOException | RuntimeException e) {
            sendFailures.increment();
            long now = System.nanoTime();
            if (now - lastSendErrorLog >= ERROR_LOG_INTERVAL_NANOS) {
                lastSendErrorLog = now;
                LOG.warn("UDP send of {} bytes to {} failed: {}", length, target, e.toString());
            }
            return false;
        }
        datagramsOut.increment();
        bytesOut.add(length);
        return true;
    }

    @Override
    public InetSocketAddress localAddress() {
        return localAddress;
    }

    @Override
    public int maxDatagramSize() {
        return maxDatagramSize;
    }

    @Override
    public void wakeup() {
        selector.wakeup();
        // The receive thread may be parked in its back-off rather than in select().
        LockSupport.unpark(thread);
    }

    /**
     * Waits until the receive thread is out of the handler it was in: after a new handler (or none)
     * is published, the old one is never called again once this returns. Any thread but the
     * receive thread.
     */
    void awaitPass() {
        pass.lock();
        pass.unlock();
    }

    /** @return counters by name, a snapshot; any thread */
    public Map<String, Long> counters() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("datagrams.in", datagramsIn.sum());
        m.put("datagrams.out", datagramsOut.sum());
        m.put("bytes.in", bytesIn.sum());
        m.put("bytes.out", bytesOut.sum());
        m.put("send.failures", sendFailures.sum());
        m.put("errors", supervision.failures());
        m.put("receive.deaths", supervision.deaths());
        m.put("receive.restarts", supervision.restarts());
        m.put("doorbell.waits", doorbellWaits.sum());
        return m;
    }

    /** @return the receive thread now, for diagnostics and tests */
    public Thread receiveThread() {
        return thread;
    }

    /** @return the receive thread's supervision: its heartbeat, failures, deaths and restarts */
    public ReceiveSupervision supervision() {
        return supervision;
    }

    /**
     * Stops the receive thread, waits for it and closes the socket. Blocks for at most a few
     * seconds; the thread is a daemon and exits at the latest when the socket is closed.
     */
    @Override
    public void close() {
        stop();
        try {
            selector.close();
        } catch (IOException e) {
            LOG.debug("closing selector", e);
        }
        try {
            channel.close();
        } catch (IOException e) {
            LOG.debug("closing channel", e);
        }
        LOG.info("UDP transport on {} closed", localAddress);
    }

    /**
     * Stops the receive thread and waits for it (at most 5 s), leaving the socket open: what
     * arrives meanwhile stays queued in it.
     *
     * @return {@code true} when the thread has ended (or never started)
     */
    boolean stop() {
        Thread thread;
        synchronized (threads) {
            running = false;
            thread = this.thread;
        }
        selector.wakeup();
        LockSupport.unpark(thread);
        try {
            if (thread.isAlive()) {
                thread.join(TimeUnit.SECONDS.toMillis(5));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            LOG.warn("UDP receive thread on {} did not stop within 5 s", localAddress);
            return false;
        }
        return true;
    }
}
