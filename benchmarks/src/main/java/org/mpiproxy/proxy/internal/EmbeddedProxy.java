package org.mpiproxy.proxy.internal;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledThreadPoolExecutor;

import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.DatagramHandler;
import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.ProcessLauncher;

/**
 * The proxy core as {@link ProxyComponent} wires it (the v1 dispatcher, its launch pool, a
 * terminate timer), but without OSGi, so that the benchmarks can run it in their
 * own JVM next to the anchors they are compared with.
 */
public final class EmbeddedProxy implements DatagramHandler, AutoCloseable {

    private final V1Dispatcher dispatcher;
    private volatile DatagramTransport transport;

    /**
     * @param channels       the channel manager
     * @param launcher       the launcher of every core
     * @param logDirectory   where ranks' output goes
     * @param launchExecutor runs launches; {@code null} for a pool like the component's by default
     * @param terminateTimeout how long TERMINATE waits for a rank to exit before stopping it
     */
    public EmbeddedProxy(ChannelManager channels, ProcessLauncher launcher, Path logDirectory,
                         Executor launchExecutor, Duration terminateTimeout) {
        ProxySettings settings = new ProxySettings(logDirectory, 1 << 20, terminateTimeout, Duration.ofSeconds(1));
        Executor executor = launchExecutor != null ? launchExecutor : launchPool();
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> daemon(r, "bench-terminate"));
        this.dispatcher = new V1Dispatcher(channels, settings, core -> launcher, this::wakeup, executor, timer);
    }

    /** @param transport the transport whose receive thread runs this handler; wakeups go to it */
    public void transport(DatagramTransport transport) {
        this.transport = transport;
    }

    private void wakeup() {
        DatagramTransport t = transport;
        if (t != null) {
            t.wakeup();
        }
    }

    @Override
    public void onDatagram(ByteBuffer datagram, InetSocketAddress source, DatagramTransport replies) {
        dispatcher.onDatagram(datagram, source, replies);
    }

    @Override
    public int doWork(DatagramTransport replies) {
        return dispatcher.doWork(replies);
    }

    @Override
    public boolean hasPendingWork() {
        return dispatcher.hasPendingWork();
    }

    /** @return the dispatcher's counters by name; any thread */
    public Map<String, Long> counters() {
        return dispatcher.counters();
    }

    /** Stops every rank and removes the channels. */
    @Override
    public void close() {
        dispatcher.close();
    }

    private static Executor launchPool() {
        return LaunchPool.create(LaunchPool.threads(0, Runtime.getRuntime().availableProcessors()), "bench-launch-");
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }
}
