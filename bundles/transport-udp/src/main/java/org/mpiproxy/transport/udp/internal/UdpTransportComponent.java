package org.mpiproxy.transport.udp.internal;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.function.Consumer;

import org.mpiproxy.api.DatagramHandler;
import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.config.CheckedConfiguration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Publishes the proxy's UDP socket as a {@link DatagramTransport} and feeds the bound handler. */
@Component(name = UdpTransportComponent.PID, enabled = false, service = DatagramTransport.class, immediate = true)
@Designate(ocd = UdpTransportComponent.Config.class)
public class UdpTransportComponent implements DatagramTransport {

    /** Configuration PID and component name. */
    public static final String PID = "org.mpiproxy.transport.udp";

    /** Configuration of the UDP transport. */
    @ObjectClassDefinition(id = PID, name = "MPI proxy UDP transport",
            description = "The UDP socket on which the MPI proxy receives requests and sends replies.")
    public @interface Config {

        @AttributeDefinition(name = "Address",
                description = "Local address to bind; 0.0.0.0 listens on every interface.")
        String address() default "127.0.0.1";

        @AttributeDefinition(name = "Port", description = "UDP port; 0 picks a free port.", min = "0", max = "65535")
        int port() default 6660;

        @AttributeDefinition(name = "Receive buffer size", description = "Socket receive buffer (SO_RCVBUF) in bytes.")
        int receive_buffer_size() default 4194304;

        @AttributeDefinition(name = "Send buffer size", description = "Socket send buffer (SO_SNDBUF) in bytes.")
        int send_buffer_size() default 4194304;

        @AttributeDefinition(name = "Largest datagram",
                description = "Largest datagram received, in bytes; longer ones are dropped. v1 itself uses at most 1448.",
                min = "548", max = "65507")
        int max_datagram_size() default 65507;
    }

    /** The proxy; while none is bound, datagrams wait in the socket for the next one. */
    private volatile DatagramHandler handler;

    private static final Logger LOG = LoggerFactory.getLogger(UdpTransportComponent.class);

    /** The last good configuration of this bundle's transport, kept across re-activations. */
    private static final CheckedConfiguration<Config> CONFIGURATIONS = new CheckedConfiguration<>(PID, Config.class, LOG::warn);

    private final CheckedConfiguration<Config> configurations;
    /** Where the one-line configuration problems go. */
    private final Consumer<String> problems;

    private volatile UdpTransport transport;
    private volatile UdpTransportSettings settings;
    private TransportManagement management;
    /** Counters of the sockets replaced by {@link #modified}, so that totals survive a rebind. */
    private final Map<String, Long> retired = new java.util.concurrent.ConcurrentHashMap<>();

    /** The component as Declarative Services creates it. */
    public UdpTransportComponent() {
        this(CONFIGURATIONS, LOG::error);
    }

    /**
     * @param configurations checks raw properties and remembers the last good configuration
     * @param problems       gets each one-line configuration problem
     */
    UdpTransportComponent(CheckedConfiguration<Config> configurations, Consumer<String> problems) {
        this.configurations = configurations;
        this.problems = problems;
    }

    /**
     * Checks the raw configuration, binds the socket and starts the receive thread. Bad values
     * are logged in one line; the transport then starts with the last good configuration, or,
     * with none yet, does not start.
     *
     * @param properties the raw configuration properties
     * @throws IOException when the socket cannot be bound
     */
    @Activate
    void activate(Map<String, Object> properties) throws IOException {
        start(configurations.activation(properties, UdpTransportComponent::settings,
                line -> problems.accept(PID + ": " + line)));
    }

    /**
     * Binds the socket and starts the receive thread.
     *
     * @param config the configuration
     * @throws IOException when the socket cannot be bound
     */
    void start(Config config) throws IOException {
        UdpTransportSettings s = settings(config);
        transport = new UdpTransport(s, () -> handler);
        settings = s;
        management = TransportManagement.register(this);
    }

    /**
     * Applies a new configuration in place, without deactivating: the new socket is bound
     * first, then the old socket's receive thread is stopped, and only then the new one's
     * started, so that the handler is never driven by two threads. What reaches the new socket
     * in between waits in it. Jobs live in the proxy and are keyed by their host's address, so
     * they continue on the new socket. A change that keeps the address and port (buffer sizes,
     * largest datagram) keeps the socket and what is queued in it: only its receive loop is
     * replaced, in the same order. A bad value, or a socket that cannot be bound, is logged
     * and the old socket stays.
     *
     * @param properties the new raw configuration properties
     */
    @Modified
    void modified(Map<String, Object> properties) {
        Config config;
        try {
            config = configurations.typed(properties);
        } catch (IllegalArgumentException e) {
            keepLastGood(e.getMessage());
            return;
        }
        apply(config);
    }

    /** @param config the new configuration, applied as {@link #modified(Map)} describes */
    void apply(Config config) {
        UdpTransportSettings next;
        try {
            next = settings(config);
        } catch (IllegalArgumentException e) {
            keepLastGood(e.getMessage());
            return;
        }
        if (next.equals(settings)) {
            configurations.remember(config);
            return;
        }
        UdpTransport old = transport;
        boolean sameSocket = next.bindAddress().equals(settings.bindAddress());
        UdpTransport replacement;
        try {
            replacement = sameSocket ? old.reconfigured(next) : UdpTransport.bind(next, () -> handler);
        } catch (IOException | RuntimeException e) {
            keepLastGood(sameSocket ? "cannot set the socket's buffer sizes (" + e + ")"
                    : "cannot bind " + next.bindAddress() + " (" + e + ")");
            return;
        }
        configurations.remember(config);
        old.stop();
        transport = replacement;
        settings = next;
        replacement.start();
        if (!sameSocket) {
            old.close();
        }
        old.counters().forEach((k, v) -> retired.merge(k, v, Long::sum));
        if (sameSocket) {
            LOG.info("{}: reconfigured on {}", PID, replacement.localAddress());
        } else {
            LOG.info("{}: moved from {} to {}", PID, old.localAddress(), replacement.localAddress());
        }
    }

    /**
     * A handler (the proxy) bound: the receive thread, which waits while there is none, starts
     * feeding it at once, beginning with what queued in the socket meanwhile.
     *
     * @param bound the handler
     */
    @Reference(name = "handler", cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY, unbind = "unbindHandler")
    void bindHandler(DatagramHandler bound) {
        handler = bound;
        UdpTransport t = transport;
        if (t != null) {
            t.wakeup();
        }
    }

    /**
     * The handler goes (its bundle stops or is updated): returns once the receive thread has left
     * it, so that it is never called while it hands its jobs over; datagrams wait in the socket
     * for the next one.
     *
     * @param unbound the handler
     */
    void unbindHandler(DatagramHandler unbound) {
        if (handler == unbound) {
            handler = null;
        }
        UdpTransport t = transport;
        if (t != null && Thread.currentThread() != t.receiveThread()) {
            t.awaitPass();
        }
    }

    private void keepLastGood(String problem) {
        problems.accept(configurations.refused(PID + ": " + problem + "; keeping the last good configuration, listening on "
                + localAddress()));
    }

    /** @return the settings in force */
    UdpTransportSettings settings() {
        return settings;
    }

    /** Stops the receive thread and closes the socket. */
    @Deactivate
    void deactivate() {
        if (management != null) {
            management.unregister();
        }
        UdpTransport t = transport;
        if (t != null) {
            t.close();
        }
    }

    static UdpTransportSettings settings(Config config) {
        return UdpTransportSettings.of(config.address(), config.port(), config.receive_buffer_size(),
                config.send_buffer_size(), config.max_datagram_size());
    }

    @Override
    public boolean send(ByteBuffer datagram, InetSocketAddress target) {
        return transport.send(datagram, target);
    }

    @Override
    public InetSocketAddress localAddress() {
        return transport.localAddress();
    }

    @Override
    public int maxDatagramSize() {
        return transport.maxDatagramSize();
    }

    @Override
    public void wakeup() {
        transport.wakeup();
    }

    /** @return the receive thread now */
    Thread receiveThread() {
        return transport.receiveThread();
    }

    /** @return the supervision of the receive thread now */
    ReceiveSupervision supervision() {
        return transport.supervision();
    }

    /** @return the transport's counters by name, a snapshot */
    public Map<String, Long> counters() {
        Map<String, Long> totals = new java.util.LinkedHashMap<>(transport.counters());
        retired.forEach((k, v) -> totals.merge(k, v, Long::sum));
        return totals;
    }
}
