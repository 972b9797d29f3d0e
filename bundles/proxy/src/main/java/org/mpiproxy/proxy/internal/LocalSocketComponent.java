package org.mpiproxy.proxy.internal;

import java.io.IOException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

import org.mpiproxy.api.LocalRuns;
import org.mpiproxy.api.PrivateDirectories;
import org.mpiproxy.api.config.CheckedConfiguration;
import org.mpiproxy.api.config.RejectedConfigurationException;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.NodeIds;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The proxy's local socket ({@code local.socket}, docs/protocol-v2.md 4.2), which gives local users
 * job credentials ({@link CredentialIssuer}) signed with the cluster key of {@code v2.key.files},
 * for {@code identity.credential.seconds}. Reads the proxy's configuration and is enabled with
 * the proxy ({@link ProxyGate}); a value the proxy refuses is refused here too, and the proxy logs
 * and reports it. A socket that cannot be opened does not stop anything: one line in the log, and
 * the health check {@code identity} says why ({@link #state()}). A changed configuration applies
 * at once: a new socket path closes the old socket and opens the new one, new keys, node name and
 * lifetime apply to the next request; a key file that cannot be read keeps the keys in force.
 * <p>
 * The socket also runs {@code mpiproxy run} for the proxy's own user (4.4,
 * {@link LocalRunHandoff}) when the launcher's {@link LocalRuns} service is there.
 */
@Component(name = LocalSocketComponent.NAME, configurationPid = ProxyComponent.PID, enabled = false, immediate = true,
        service = LocalSocketComponent.class)
public class LocalSocketComponent {

    /** Component name. */
    static final String NAME = "org.mpiproxy.identity";
    /** Default of {@code local.socket}. */
    static final String DEFAULT_SOCKET = "/run/mpiproxy/proxy.sock";

    private static final Logger LOG = LoggerFactory.getLogger(LocalSocketComponent.class);

    /** The last good configuration, kept across re-activations; the proxy reports refusals, not this. */
    private static final CheckedConfiguration<ProxyConfig> CONFIGURATIONS = new CheckedConfiguration<>(ProxyConfig.class);

    /**
     * What the health check tells of the socket.
     *
     * @param socket  the configured socket, {@code null} when it is off
     * @param problem why it is not open, {@code null} when it is (or is off)
     */
    record State(Path socket, String problem) {
    }

    /**
     * What requests are answered with.
     *
     * @param keyFiles   the key files, by key id
     * @param nodeId     this node's id, the issuer
     * @param lifetime   seconds a credential is valid
     * @param issuer     the issuer, {@code null} while no key could be read
     * @param keyProblem why no key could be read, {@code null} with an issuer
     */
    private record Issuing(Map<Integer, Path> keyFiles, long nodeId, long lifetime, CredentialIssuer issuer,
                           String keyProblem) {
    }

    private final CheckedConfiguration<ProxyConfig> configurations;
    private final RejectedConfigurationException rejected;
    private final LongSupplier wallMillis;
    private final LongSupplier monotonicMillis;
    private final SecureRandom random = new SecureRandom();
    private final AtomicReference<Issuing> issuing = new AtomicReference<>();
    /** The launcher's runs, when its bundle is there. */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    private volatile LocalRuns runs;
    private final LocalRunHandoff handoff = new LocalRunHandoff(() -> runs, PrivateDirectories.currentUid());
    /** Guarded by this. */
    private LocalSocketServer server;
    private volatile State state = new State(null, null);

    /**
     * @param properties the raw configuration properties of the proxy
     */
    @Activate
    public LocalSocketComponent(Map<String, Object> properties) {
        this(properties, CONFIGURATIONS, System::currentTimeMillis, () -> System.nanoTime() / 1_000_000);
    }

    /**
     * @param properties      the raw configuration properties of the proxy
     * @param configurations  checks them and remembers the last good configuration
     * @param wallMillis      milliseconds since the epoch, for the credentials
     * @param monotonicMillis a monotonic clock, for the connections' deadlines
     */
    LocalSocketComponent(Map<String, Object> properties, CheckedConfiguration<ProxyConfig> configurations,
                         LongSupplier wallMillis, LongSupplier monotonicMillis) {
        this.configurations = configurations;
        this.wallMillis = wallMillis;
        this.monotonicMillis = monotonicMillis;
        RejectedConfigurationException refused = null;
        try {
            // the proxy logs and reports what is wrong
            apply(configurations.activation(properties, ProxyConfigs::validate, line -> LOG.debug("{}", line)));
        } catch (RejectedConfigurationException e) {
            refused = e;
        }
        this.rejected = refused;
    }

    /**
     * @throws RejectedConfigurationException when a value is bad and there is no last good configuration
     */
    @Activate
    void activate() {
        if (rejected != null) {
            throw rejected;
        }
    }

    /** Applies a changed configuration; one the proxy refuses leaves everything as it is. */
    @Modified
    void modified(Map<String, Object> properties) {
        ProxyConfig config;
        try {
            config = ProxyConfigs.validate(configurations.typed(properties));
        } catch (IllegalArgumentException e) {
            LOG.debug("{}: {}; keeping the local socket as it is", ProxyComponent.PID, e.getMessage());
            return;
        }
        configurations.remember(config);
        apply(config);
    }

    /** Closes the socket. */
    @Deactivate
    synchronized void deactivate() {
        if (server != null) {
            server.close();
            server = null;
        }
        handoff.close();
    }

    /** @return the socket's state, for the health check */
    State state() {
        return state;
    }

    private synchronized void apply(ProxyConfig config) {
        Issuing previous = issuing.get();
        long nodeId = NodeIds.of(V2Config.nodeName(config));
        long lifetime = config.identity_credential_seconds();
        Issuing next;
        try {
            // the proxy generates the default key file: made here too, one could read the other's half-written file
            next = issuing(V2Config.keyFiles(config, false), nodeId, lifetime);
        } catch (IllegalArgumentException e) {
            next = new Issuing(Map.of(), nodeId, lifetime, null, e.getMessage());
        }
        if (next.issuer() == null && previous != null && previous.issuer() != null) {
            LOG.warn("local socket: {}; keeping the cluster keys in force", next.keyProblem());
            next = new Issuing(previous.keyFiles(), nodeId, lifetime, new CredentialIssuer(previous.issuer().keys(),
                    nodeId, wallMillis, random, lifetime), null);
        }
        issuing.set(next);
        Path socket = ProxyConfigs.localSocket(config);
        if (server != null && !server.path().equals(socket)) {
            server.close();
            server = null;
        }
        if (socket == null) {
            state = new State(null, null);
        } else if (server == null) {
            try {
                server = LocalSocketServer.open(socket, this::answer, monotonicMillis);
                server.takeRuns(handoff);
                state = new State(socket, null);
                LOG.info("local socket {} issues job credentials", socket);
            } catch (IOException e) {
                state = new State(socket, e.getMessage());
                LOG.warn("no local socket: {}", e.getMessage());
            }
        }
    }

    /** @return what requests are answered with: an issuer, or why no key could be read */
    private Issuing issuing(Map<Integer, Path> files, long nodeId, long lifetime) {
        if (files.isEmpty()) {
            return new Issuing(files, nodeId, lifetime, null, "no v2 key file is configured");
        }
        try {
            return new Issuing(files, nodeId, lifetime, new CredentialIssuer(ClusterKeys.loadStrong(files), nodeId,
                    wallMillis, random, lifetime), null);
        } catch (IllegalArgumentException e) {
            return new Issuing(files, nodeId, lifetime, null, e.getMessage());
        }
    }

    /** Answers a request of the socket; without keys, reads them again first (the proxy may have made them since). */
    private String answer(String line, long uid, long gid) {
        Issuing now = issuing.get();
        if (now.issuer() == null) {
            Issuing again = now.keyFiles().isEmpty() ? now : issuing(now.keyFiles(), now.nodeId(), now.lifetime());
            if (again.issuer() == null) {
                return "ERR no usable cluster key: " + again.keyProblem();
            }
            // a configuration applied meanwhile wins
            issuing.compareAndSet(now, again);
            now = again;
        }
        return now.issuer().answer(line, uid, gid);
    }
}
