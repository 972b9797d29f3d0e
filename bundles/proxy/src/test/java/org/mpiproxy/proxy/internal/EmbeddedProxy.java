package org.mpiproxy.proxy.internal;

import java.io.Closeable;
import java.io.IOException;
import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledThreadPoolExecutor;

import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.DatagramHandler;
import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.LocalRuns;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.api.config.CheckedConfiguration;
import org.mpiproxy.protocol.ClusterKeys;

/**
 * The proxy core as {@link ProxyComponent} wires it (the v1 dispatcher and, when asked, the v2
 * dispatcher behind the {@link ProtocolFront}, its launch pool, a terminate timer), but without
 * OSGi, so that the benchmarks can run it in their own JVM next to the anchors they are
 * compared with.
 */
public final class EmbeddedProxy implements DatagramHandler, AutoCloseable {

    /** Node name of the embedded proxy: the address hosts send to, as in the demo hostfile. */
    public static final String NODE_NAME = "127.0.0.1";

    /**
     * Protocol v2 as an operator configures it.
     *
     * @param keyFile      the cluster key file ({@code v2.key.files}); mode 0600
     * @param datagramSize {@code v2.datagram.size}
     * @param nodeName     {@code node.name}: the address hosts send to
     */
    public record V2(Path keyFile, int datagramSize, String nodeName) {

        /** With node name {@link #NODE_NAME}. */
        public V2(Path keyFile, int datagramSize) {
            this(keyFile, datagramSize, NODE_NAME);
        }
    }

    private final V1Dispatcher dispatcher;
    private final ProtocolFront front;
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
        this(channels, launcher, logDirectory, launchExecutor, terminateTimeout, null);
    }

    /**
     * @param channels       the channel manager
     * @param launcher       the launcher of every core
     * @param logDirectory   where ranks' output goes
     * @param launchExecutor runs launches; {@code null} for the component's default launch pool
     * @param terminateTimeout how long TERMINATE waits for a rank to exit before stopping it
     * @param v2             protocol v2 next to v1; {@code null} for v1 only
     */
    public EmbeddedProxy(ChannelManager channels, ProcessLauncher launcher, Path logDirectory,
                         Executor launchExecutor, Duration terminateTimeout, V2 v2) {
        ProxySettings settings = new ProxySettings(logDirectory, 1 << 20, terminateTimeout, Duration.ofSeconds(1));
        Executor executor = launchExecutor != null ? launchExecutor : launchPool();
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> daemon(r, "bench-terminate"));
        this.dispatcher = new V1Dispatcher(channels, settings, core -> launcher, this::wakeup, executor, timer);
        V2Dispatcher second = null;
        if (v2 != null) {
            V2Settings v2Settings = new V2Settings(ClusterKeys.load(Map.of(1, v2.keyFile())), v2.nodeName(),
                    Duration.ofSeconds(30), 65536, v2.datagramSize(), Duration.ofSeconds(300));
            second = new V2Dispatcher(channels, settings, v2Settings, core -> launcher, this::wakeup, executor, timer,
                    System::currentTimeMillis);
        }
        this.front = new ProtocolFront(dispatcher, true, second);
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
        front.onDatagram(datagram, source, replies);
    }

    @Override
    public int doWork(DatagramTransport replies) {
        return front.doWork(replies);
    }

    @Override
    public boolean hasPendingWork() {
        return front.hasPendingWork();
    }

    @Override
    public int armDoorbells(long doorbell, DatagramTransport replies) {
        return front.armDoorbells(doorbell, replies);
    }

    /** @return the dispatchers' counters by name (v2's start with {@code v2.}); any thread */
    public Map<String, Long> counters() {
        return front.counters();
    }

    /**
     * The proxy's local socket (docs/protocol-v2.md 4.2) as {@link LocalSocketComponent} runs it,
     * giving local users job credentials signed with the cluster key of {@code v2}.
     *
     * @param v2        the v2 settings of the proxy: its key file and node name
     * @param socket    {@code local.socket}, absolute; its directory is made as the proxy makes it
     * @param directory where the proxy's log and state directories go
     * @return the open socket; closing it closes the socket
     * @throws IOException with the component's one line when the socket could not be opened
     */
    public static Closeable localSocket(V2 v2, Path socket, Path directory) throws IOException {
        return localSocket(v2, socket, directory, null);
    }

    /**
     * The proxy's local socket as {@link #localSocket(V2, Path, Path)} opens it, which also runs
     * {@code mpiproxy run} for the proxy's own user (docs/protocol-v2.md 4.4) with the launcher's
     * service given, bound as Declarative Services binds the component's optional {@link LocalRuns}
     * reference: into its field, before activation.
     *
     * @param v2        the v2 settings of the proxy: its key file and node name
     * @param socket    {@code local.socket}, absolute; its directory is made as the proxy makes it
     * @param directory where the proxy's log and state directories go
     * @param runs      the launcher's service; {@code null} for a proxy without the cli bundle
     * @return the open socket; closing it closes the socket and stops the runs going on
     * @throws IOException with the component's one line when the socket could not be opened
     */
    public static Closeable localSocket(V2 v2, Path socket, Path directory, LocalRuns runs) throws IOException {
        Map<String, Object> config = new HashMap<>();
        config.put("log.directory", directory.resolve("logs").toString());
        config.put("state.directory", directory.resolve("state").toString());
        config.put("v2.key.files", v2.keyFile().toString());
        config.put("node.name", v2.nodeName());
        config.put("local.socket", socket.toString());
        LocalSocketComponent component = new LocalSocketComponent(config, new CheckedConfiguration<>(ProxyConfig.class),
                System::currentTimeMillis, () -> System.nanoTime() / 1_000_000);
        if (runs != null) {
            bind(component, runs);
        }
        component.activate();
        String problem = component.state().problem();
        if (problem != null) {
            component.deactivate();
            throw new IOException(problem);
        }
        return component::deactivate;
    }

    /** Sets the component's {@code runs} reference field, as the service component runtime does. */
    private static void bind(LocalSocketComponent component, LocalRuns runs) {
        try {
            Field field = LocalSocketComponent.class.getDeclaredField("runs");
            field.setAccessible(true);
            field.set(component, runs);
        } catch (ReflectiveOperationException e) {
            component.deactivate();
            throw new IllegalStateException("LocalSocketComponent has no LocalRuns field 'runs' to bind", e);
        }
    }

    /** Stops every rank and removes the channels. */
    @Override
    public void close() {
        front.close();
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
