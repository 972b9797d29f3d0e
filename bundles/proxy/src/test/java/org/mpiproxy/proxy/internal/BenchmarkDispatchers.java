package org.mpiproxy.proxy.internal;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;

import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.DatagramHandler;
import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.ProcessLauncher;

/**
 * Gives the benchmarks the v1 dispatcher alone, as the proxy builds it, without the protocol
 * front or OSGi: what the dispatch benchmark measures. Published in this bundle's test jar.
 */
public final class BenchmarkDispatchers {

    /** A dispatcher the benchmark drives and then closes. */
    public interface Dispatcher extends DatagramHandler, AutoCloseable {
        /** @return its counters by name */
        Map<String, Long> counters();

        @Override
        void close();
    }

    private BenchmarkDispatchers() {
    }

    /**
     * @param channels         the channel manager
     * @param launcher         the launcher of every core
     * @param logDirectory     where rank output would go
     * @param terminateTimeout how long TERMINATE waits for an exit
     * @param stopGrace        between SIGTERM and SIGKILL
     * @param timer            runs TERMINATE timeouts
     * @return the v1 dispatcher; launches run on the calling thread
     */
    public static Dispatcher v1(ChannelManager channels, ProcessLauncher launcher, Path logDirectory,
                                Duration terminateTimeout, Duration stopGrace, ScheduledExecutorService timer) {
        V1Dispatcher dispatcher = new V1Dispatcher(channels,
                new ProxySettings(logDirectory, 1 << 20, terminateTimeout, stopGrace), core -> launcher, () -> { },
                Runnable::run, timer);
        return new Dispatcher() {
            @Override
            public void onDatagram(ByteBuffer datagram, java.net.InetSocketAddress source, DatagramTransport replies) {
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

            @Override
            public int armDoorbells(long doorbell, DatagramTransport replies) {
                return dispatcher.armDoorbells(doorbell, replies);
            }

            @Override
            public Map<String, Long> counters() {
                return dispatcher.counters();
            }

            @Override
            public void close() {
                dispatcher.close();
            }
        };
    }
}
