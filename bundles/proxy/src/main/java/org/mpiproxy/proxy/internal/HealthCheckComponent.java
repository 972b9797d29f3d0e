package org.mpiproxy.proxy.internal;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.HealthResult;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.api.ProxyStatus;
import org.mpiproxy.api.config.CheckedConfiguration;
import org.mpiproxy.api.config.ConfigurationReports;
import org.mpiproxy.api.config.RejectedConfigurationException;
import org.mpiproxy.process.Munge;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
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

/**
 * Runs the node's health checks on demand: the UDP transport listens, each launcher's
 * program directory is usable, the v2 key (when configured) is usable, the local socket is open and
 * MUNGE works, the channel directory's file system has room, the receive thread serves (it runs and is not
 * stuck in the handler), the log, state and staged directories have room, the heap has room after the last
 * garbage collection, and no component refused a
 * configuration value or holds an unknown key (the line it logged, until the value is fixed).
 */
@Component(name = HealthCheckComponent.PID, enabled = false, service = HealthCheckComponent.class)
@Designate(ocd = HealthCheckComponent.Config.class)
public class HealthCheckComponent {

    /** Configuration PID and component name. */
    public static final String PID = "org.mpiproxy.health";

    /** Service property of the launchers naming their program directory (their configuration key). */
    static final String PROGRAM_DIRECTORY = "program.directory";

    private static final Logger LOG = LoggerFactory.getLogger(HealthCheckComponent.class);

    /** Configuration of the health checks. */
    @ObjectClassDefinition(id = PID, name = "MPI proxy health checks",
            description = "Thresholds of the node's health checks (mpi:health, JMX attribute Health).")
    public @interface Config {

        @AttributeDefinition(name = "Shared memory minimum",
                description = "Free bytes the channel directory's file system must have; below it the check is"
                        + " CRITICAL, below twice it WARN.", min = "0")
        long shm_min_free_bytes() default 67108864L;

        @AttributeDefinition(name = "Key file",
                description = "The v2 key file to check; empty means the key files the proxy serves v2 with.")
        String key_file() default "";

        @AttributeDefinition(name = "Disk warning",
                description = "Free bytes the file systems of the log, state and staged directories should have;"
                        + " below it their checks (disk.logs, disk.state, disk.staged) WARN.", min = "0")
        long disk_warn_free_bytes() default 536870912L;

        @AttributeDefinition(name = "Disk minimum",
                description = "Free bytes the file systems of the log, state and staged directories must have;"
                        + " below it their checks are CRITICAL (nearly full). At most disk.warn.free.bytes.",
                min = "0")
        long disk_min_free_bytes() default 67108864L;

        @AttributeDefinition(name = "Stuck receive thread",
                description = "Seconds the UDP receive thread may spend in one pass through the proxy's handler;"
                        + " longer, the udp.serving check is CRITICAL and names where it is stuck.", min = "1")
        int serving_stuck_seconds() default 10;

        @AttributeDefinition(name = "Heap warning",
                description = "Percent of the most the heap may grow to that may stay in use after a garbage"
                        + " collection; above it the heap check WARNs.", min = "1", max = "100")
        int heap_warn_percent() default 85;

        @AttributeDefinition(name = "Heap maximum",
                description = "Percent of the most the heap may grow to that may stay in use after a garbage"
                        + " collection; above it the heap check is CRITICAL. At least heap.warn.percent.",
                min = "1", max = "100")
        int heap_critical_percent() default 95;

        @AttributeDefinition(name = "MUNGE required",
                description = "Whether users launch from machines without a proxy through MUNGE (protocol-v2.md"
                        + " 4.3): then a node where MUNGE does not work WARNs (identity); otherwise it only says so.")
        boolean munge_required() default false;
    }

    /** Validated settings. */
    record Settings(long shmMinFreeBytes, Path keyFile, long diskWarnFreeBytes, long diskMinFreeBytes,
                    long servingStuckMillis, int heapWarnPercent, int heapCriticalPercent, boolean mungeRequired) {
    }

    /** A launcher and the program directory of its service properties (for launchers that do not tell). */
    private record Launcher(ProcessLauncher launcher, Path configured) {
        Path programDirectory() {
            Path now = launcher.programDirectory();
            return now != null ? now : configured;
        }
    }

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    volatile DatagramTransport transport;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    volatile ChannelManager channels;

    /** The proxy of this bundle, which knows the v2 keys it serves with. */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY, target = "(component.name=" + ProxyComponent.PID + ")")
    volatile ProxyStatus proxy;

    /** This bundle's local socket, which gives local users job credentials. */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    volatile LocalSocketComponent identity;

    /** The last good configuration of this bundle's health checks, kept across re-activations. */
    private static final CheckedConfiguration<Config> CONFIGURATIONS = new CheckedConfiguration<>(PID, Config.class, LOG::warn);

    private final CheckedConfiguration<Config> configurations;
    /** Where the one-line configuration problems go. */
    private final Consumer<String> problems;
    /** Running launchers by kind, with the directory their service properties name. */
    private final Map<String, Launcher> launchers = new ConcurrentHashMap<>();
    private volatile Settings settings;
    /** Why these checks do not start, {@code null} when they run. */
    private final RejectedConfigurationException rejected;
    /** Why MUNGE does not work on this node, {@code null} when it does; {@link Munge#problem()} but in tests. */
    volatile Supplier<String> munge = Munge::problem;
    /** Reads the free space of a file system; the file system's own count but in tests. */
    volatile NodeHealth.FreeSpace freeSpace = NodeHealth.FILE_STORE;
    /** What the components refused of their configuration; the node's record but in tests. */
    volatile ConfigurationReports reports = ConfigurationReports.node();
    /** Reads the receive thread's state from the transport; the transport's bean but in tests. */
    volatile ReceiveThreadProbe.Reader receiveThread = ReceiveThreadProbe.platform();
    /** Reads the heap's figures; the JVM's but in tests. */
    volatile NodeHealth.HeapUsage heap = NodeHealth.JVM_HEAP;

    /**
     * Checks the raw configuration: bad values are logged in one line, and the checks then run
     * with the last good configuration, or, with none yet, do not start: {@link #activate()}
     * then refuses (Declarative Services logs a constructor's exception with its stack trace,
     * an activate method's as it is).
     *
     * @param properties the raw configuration properties
     */
    @Activate
    public HealthCheckComponent(Map<String, Object> properties) {
        this(properties, CONFIGURATIONS, LOG::error);
    }

    /**
     * @param properties     the raw configuration properties
     * @param configurations checks them and remembers the last good configuration
     * @param problems       gets each one-line configuration problem
     */
    HealthCheckComponent(Map<String, Object> properties, CheckedConfiguration<Config> configurations,
                         Consumer<String> problems) {
        this.configurations = configurations;
        this.problems = problems;
        Settings accepted = null;
        RejectedConfigurationException refused = null;
        try {
            accepted = settings(configurations.activation(properties, HealthCheckComponent::settings,
                    line -> problems.accept(PID + ": " + line)));
        } catch (RejectedConfigurationException e) {
            refused = e;
        }
        this.settings = accepted;
        this.rejected = refused;
    }

    /**
     * Refuses to start when the configuration was rejected at construction.
     *
     * @throws RejectedConfigurationException when a value is bad and there is no last good configuration
     */
    @Activate
    void activate() {
        if (rejected != null) {
            throw rejected;
        }
    }

    /**
     * @param config the configuration
     * @throws IllegalArgumentException when a value is bad, naming its key and the value
     */
    HealthCheckComponent(Config config) {
        this.configurations = new CheckedConfiguration<>(Config.class);
        this.problems = LOG::error;
        this.settings = settings(config);
        this.rejected = null;
    }

    /**
     * Applies a new configuration; a bad value is logged in one line and the last good
     * configuration stays.
     *
     * @param properties the new raw configuration properties
     */
    @Modified
    void modified(Map<String, Object> properties) {
        try {
            Config config = configurations.typed(properties);
            settings = settings(config);
            configurations.remember(config);
        } catch (IllegalArgumentException e) {
            problems.accept(configurations.refused(PID + ": " + e.getMessage() + "; keeping the last good configuration"));
        }
    }

    static Settings settings(Config config) {
        if (config.shm_min_free_bytes() < 0) {
            throw new IllegalArgumentException("shm.min.free.bytes=" + config.shm_min_free_bytes() + " must be >= 0");
        }
        String key = config.key_file() == null ? "" : config.key_file().trim();
        if (!key.isEmpty() && !Path.of(key).isAbsolute()) {
            throw new IllegalArgumentException("key.file=" + key + " must be an absolute path");
        }
        if (config.disk_min_free_bytes() < 0) {
            throw new IllegalArgumentException("disk.min.free.bytes=" + config.disk_min_free_bytes()
                    + " must be >= 0");
        }
        if (config.disk_warn_free_bytes() < config.disk_min_free_bytes()) {
            throw new IllegalArgumentException("disk.warn.free.bytes=" + config.disk_warn_free_bytes()
                    + " must be >= disk.min.free.bytes=" + config.disk_min_free_bytes());
        }
        if (config.serving_stuck_seconds() < 1) {
            throw new IllegalArgumentException("serving.stuck.seconds=" + config.serving_stuck_seconds()
                    + " must be >= 1");
        }
        if (config.heap_warn_percent() < 1 || config.heap_warn_percent() > 100) {
            throw new IllegalArgumentException("heap.warn.percent=" + config.heap_warn_percent()
                    + " must be in 1..100");
        }
        if (config.heap_critical_percent() < config.heap_warn_percent() || config.heap_critical_percent() > 100) {
            throw new IllegalArgumentException("heap.critical.percent=" + config.heap_critical_percent()
                    + " must be in heap.warn.percent=" + config.heap_warn_percent() + "..100");
        }
        return new Settings(config.shm_min_free_bytes(), key.isEmpty() ? null : Path.of(key),
                config.disk_warn_free_bytes(), config.disk_min_free_bytes(),
                config.serving_stuck_seconds() * 1000L, config.heap_warn_percent(), config.heap_critical_percent(),
                config.munge_required());
    }

    Settings settings() {
        return settings;
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY, unbind = "removeLauncher")
    void addLauncher(ProcessLauncher launcher, Map<String, Object> properties) {
        Object kind = properties.get(ProcessLauncher.KIND);
        if (kind != null) {
            Path configured;
            try {
                configured = programDirectory(properties.get(PROGRAM_DIRECTORY));
            } catch (java.nio.file.InvalidPathException e) {
                configured = null;
            }
            launchers.put(kind.toString(), new Launcher(launcher, configured));
        }
    }

    void removeLauncher(ProcessLauncher launcher, Map<String, Object> properties) {
        Object kind = properties.get(ProcessLauncher.KIND);
        if (kind != null) {
            launchers.computeIfPresent(kind.toString(), (k, v) -> v.launcher() == launcher ? null : v);
        }
    }

    /** @return the program directory each running launcher uses now, by kind */
    Map<String, Path> programDirectories() {
        Map<String, Path> directories = new java.util.TreeMap<>();
        launchers.forEach((kind, l) -> directories.put(kind, l.programDirectory()));
        return directories;
    }

    /** Resolves a launcher's configured directory as the launchers do: empty means karaf.home/programs. */
    static Path programDirectory(Object configured) {
        String text = configured == null ? "" : configured.toString().trim();
        if (!text.isEmpty()) {
            return Path.of(text);
        }
        String home = System.getProperty("karaf.home");
        return Path.of(home == null || home.isBlank() ? System.getProperty("user.dir") : home, "programs");
    }

    /** @return every check's result, in a fixed order */
    public List<HealthResult> check() {
        Settings s = settings;
        List<HealthResult> results = new ArrayList<>();
        DatagramTransport t = transport;
        results.add(NodeHealth.listening(t != null ? t.localAddress() : null));
        for (String kind : List.of(ProcessLauncher.KIND_LOCAL, ProcessLauncher.KIND_CORE)) {
            Launcher l = launchers.get(kind);
            results.add(NodeHealth.programs(kind, l == null ? null : l.programDirectory()));
        }
        ProxyStatus p = proxy;
        results.add(NodeHealth.key(s.keyFile(), p instanceof ProxyComponent ? ((ProxyComponent) p).v2Keys() : null));
        LocalSocketComponent socket = identity;
        results.add(NodeHealth.identity(socket == null ? null : socket.state(), munge.get(), s.mungeRequired()));
        ChannelManager c = channels;
        NodeHealth.FreeSpace free = freeSpace;
        results.add(NodeHealth.sharedMemory(c != null ? c.baseDirectory() : null, s.shmMinFreeBytes(), free));
        results.add(serving(t));
        ProxyConfig config = p instanceof ProxyComponent ? ((ProxyComponent) p).configuration() : null;
        results.add(NodeHealth.freeSpace("logs", "log directory",
                config == null ? null : ProxySettings.resolveLogDirectory(config.log_directory()),
                s.diskWarnFreeBytes(), s.diskMinFreeBytes(), free));
        results.add(NodeHealth.freeSpace("state", "state directory",
                config == null ? null : ProxyConfigs.stateDirectory(config),
                s.diskWarnFreeBytes(), s.diskMinFreeBytes(), free));
        results.add(NodeHealth.freeSpace("staged", "staged directory",
                org.mpiproxy.process.StagedFiles.directory(System::getProperty),
                s.diskWarnFreeBytes(), s.diskMinFreeBytes(), free));
        results.add(heap(s));
        results.addAll(NodeHealth.configuration(reports.reports()));
        return results;
    }

    private HealthResult heap(Settings s) {
        NodeHealth.Heap figures;
        try {
            figures = heap.read();
        } catch (RuntimeException e) {
            figures = null;
        }
        return NodeHealth.heap(figures, s.heapWarnPercent(), s.heapCriticalPercent());
    }

    private HealthResult serving(DatagramTransport t) {
        if (t == null) {
            return NodeHealth.serving(null, settings.servingStuckMillis());
        }
        try {
            return NodeHealth.serving(receiveThread.read(), settings.servingStuckMillis());
        } catch (javax.management.JMException | RuntimeException e) {
            return new HealthResult(NodeHealth.SERVING, HealthResult.Status.WARN,
                    "cannot read the receive thread's state from " + ReceiveThreadProbe.TRANSPORT + ": " + e);
        }
    }
}
