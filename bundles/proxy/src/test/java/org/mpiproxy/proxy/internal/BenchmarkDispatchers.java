package org.mpiproxy.proxy.internal;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;

import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.DatagramHandler;
import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.protocol.ClusterKeys;

/**
 * Gives the benchmarks the v1 or the v2 dispatcher alone, as the proxy builds it, without the protocol
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
        return wrap(dispatcher::onDatagram, dispatcher::doWork, dispatcher::hasPendingWork, dispatcher::armDoorbells,
                dispatcher::counters, dispatcher::close);
    }

    /**
     * @param channels         the channel manager
     * @param launcher         the launcher of every core
     * @param logDirectory     where rank output would go
     * @param terminateTimeout how long TERMINATE waits for an exit
     * @param stopGrace        between SIGTERM and SIGKILL
     * @param timer            runs TERMINATE timeouts
     * @param keys             the cluster keys requests are signed with
     * @param nodeName         the node's name (requests name its id)
     * @param datagramSize     {@code v2.datagram.size}
     * @return the v2 dispatcher alone, on the wall clock; launches run on the calling thread
     */
    public static Dispatcher v2(ChannelManager channels, ProcessLauncher launcher, Path logDirectory,
                                Duration terminateTimeout, Duration stopGrace, ScheduledExecutorService timer,
                                ClusterKeys keys, String nodeName, int datagramSize) {
        V2Dispatcher dispatcher = new V2Dispatcher(channels,
                new ProxySettings(logDirectory, 1 << 20, terminateTimeout, stopGrace),
                new V2Settings(keys, nodeName, Duration.ofSeconds(30), 65536, datagramSize, Duration.ofSeconds(300)),
                core -> launcher, () -> { }, Runnable::run, timer, System::currentTimeMillis);
        return wrap(dispatcher::onDatagram, dispatcher::doWork, dispatcher::hasPendingWork, (doorbell, replies) -> 0,
                dispatcher::counters, dispatcher::close);
    }

    private interface OnDatagram {
        void on(ByteBuffer datagram, InetSocketAddress source, DatagramTransport replies);
    }

    private interface ArmDoorbells {
        int arm(long doorbell, DatagramTransport replies);
    }

    private static Dispatcher wrap(OnDatagram onDatagram, ToIntFunction<DatagramTransport> doWork,
                                   BooleanSupplier pending, ArmDoorbells arm, Supplier<Map<String, Long>> counters,
                                   Runnable close) {
        return new Dispatcher() {
            @Override
            public void onDatagram(ByteBuffer datagram, InetSocketAddress source, DatagramTransport replies) {
                onDatagram.on(datagram, source, replies);
            }

            @Override
            public int doWork(DatagramTransport replies) {
                return doWork.applyAsInt(replies);
            }

            @Override
            public boolean hasPendingWork() {
                return pending.getAsBoolean();
            }

            @Override
            public int armDoorbells(long doorbell, DatagramTransport replies) {
                return arm.arm(doorbell, replies);
            }

            @Override
            public Map<String, Long> counters() {
                return counters.get();
            }

            @Override
            public void close() {
                close.run();
            }
        };
    }
}
