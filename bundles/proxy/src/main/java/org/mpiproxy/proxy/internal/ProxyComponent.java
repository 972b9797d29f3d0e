package org.mpiproxy.proxy.internal;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.DatagramHandler;
import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.api.ProxyStatus;
import org.mpiproxy.api.RankOutputListener;
import org.mpiproxy.api.config.CheckedConfiguration;
import org.mpiproxy.api.config.RejectedConfigurationException;
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

/** Wires the v1 and v2 dispatchers to the channel manager, the launchers and the UDP transport. */
@Component(name = ProxyComponent.PID, immediate = true, enabled = false, service = {DatagramHandler.class, ProxyStatus.class})
@Designate(ocd = ProxyComponent.Config.class)
public class ProxyComponent implements DatagramHandler, ProxyStatus {

    /** Configuration PID and component name. */
    public static final String PID = "org.mpiproxy.proxy";

    /** Minutes between two sweeps of the log directory (the first runs at start; a configuration change sweeps at once). */
    static final int LOG_SWEEP_MINUTES = 10;

    /** Configuration of the proxy. */
    @ObjectClassDefinition(id = PID, name = "MPI proxy",
            description = "Launches ranks for MPI hosts and relays their data between UDP and shared memory.")
    public @interface Config {

        @AttributeDefinition(name = "Log directory",
                description = "Directory for the ranks' output, job-<id>/rank-<r>.out and .err; "
                        + "empty means ${karaf.data}/mpiproxy/logs.")
        String log_directory() default "";

        @AttributeDefinition(name = "Log retention days",
                description = "Days the ranks' output of a finished job is kept after it was last written; 0 means"
                        + " no age limit. Checked at start, every " + LOG_SWEEP_MINUTES + " minutes and when the"
                        + " configuration changes.", min = "0")
        int log_retention_days() default 14;

        @AttributeDefinition(name = "Log retention megabytes",
                description = "Megabytes the ranks' output of all jobs may take; beyond it the oldest output of"
                        + " finished jobs is deleted. 0 means no size limit. A running rank's output is never"
                        + " deleted.", min = "0")
        long log_retention_megabytes() default 512;

        @AttributeDefinition(name = "Hold limit",
                description = "Bytes of SEND data kept per rank while its ring is full; more is dropped.", min = "0")
        long hold_limit_bytes() default 1048576;

        @AttributeDefinition(name = "Terminate timeout",
                description = "Seconds TERMINATE waits for a rank to exit before stopping it.", min = "0")
        int terminate_timeout_seconds() default 30;

        @AttributeDefinition(name = "Stop grace",
                description = "Seconds between SIGTERM and SIGKILL when a rank is stopped.", min = "0")
        int stop_grace_seconds() default 10;

        @AttributeDefinition(name = "Abort on failure",
                description = "When a rank of a v1 job exits with a non-zero status or cannot be started, stop the"
                        + " job's other ranks.")
        boolean abort_on_failure() default true;

        @AttributeDefinition(name = "Job timeout",
                description = "Seconds after which every rank of a v1 job is stopped (SIGTERM to its process group,"
                        + " SIGKILL after the stop grace); 0 means no limit.", min = "0")
        int job_timeout_seconds() default 0;

        @AttributeDefinition(name = "Host silence",
                description = "Seconds without any request from a job's host after which the job's ranks are stopped"
                        + " and removed (a host waiting for a RECV reply counts as heard); 0 means never.",
                min = "0")
        int host_silence_seconds() default 300;

        @AttributeDefinition(name = "State directory",
                description = "Directory where the proxy records the rank processes it started, per job, so that"
                        + " after a crash the next start kills them and removes their shared memory;"
                        + " empty means ${karaf.data}/mpiproxy/state.")
        String state_directory() default "";

        @AttributeDefinition(name = "v1 enabled",
                description = "Serve protocol v1 (FreeNOS, unauthenticated). Turn it off on nodes untrusted hosts can reach.")
        boolean v1_enabled() default true;

        @AttributeDefinition(name = "v2 enabled", description = "Serve protocol v2 (authenticated, reliable).")
        boolean v2_enabled() default true;

        @AttributeDefinition(name = "Node name",
                description = "This node's name; v2 requests must name it (hosts use the host field of their hostfile"
                        + " line). Empty means 127.0.0.1.")
        String node_name() default "";

        @AttributeDefinition(name = "Start-up wait",
                description = "Seconds the proxy, once started, waits for its channel manager and a launcher for core 0"
                        + " before it answers requests without them. Datagrams that arrive meanwhile are dropped"
                        + " and counted (datagrams.before.ready), as if the port were not open yet: an EXEC is"
                        + " never refused only because the node is still booting.", min = "0")
        int startup_wait_seconds() default 60;

        @AttributeDefinition(name = "Launch threads",
                description = "Ranks started at once (a spawn mostly waits for the kernel, so more than the cores"
                        + " overlap); 0 means " + LaunchPool.DEFAULT_THREADS_PER_CORE + " per core.", min = "0")
        int launch_threads() default 0;

        @AttributeDefinition(name = "v2 key files",
                description = "Cluster key files as id:path, comma-separated; the first signs replies. A path alone"
                        + " is key id 1. Empty means ${karaf.etc}/mpiproxy.key.")
        String v2_key_files() default "";

        @AttributeDefinition(name = "Generate v2 key",
                description = "Create the default key file (random 256 bits, mode 0600) when it is missing.")
        boolean v2_key_generate() default true;

        @AttributeDefinition(name = "v2 clock skew", description = "Seconds a v2 timestamp may differ from the clock.",
                min = "0")
        int v2_skew_seconds() default 30;

        @AttributeDefinition(name = "v2 replay cache size",
                description = "Nonces of EXEC, TERMINATE and STATUS requests remembered per key (replays are refused).",
                min = "1")
        int v2_replay_cache_size() default 65536;

        @AttributeDefinition(name = "v2 datagram size", description = "Largest v2 datagram sent or accepted, in bytes.",
                min = "112", max = "65507")
        int v2_datagram_size() default 1448;

        @AttributeDefinition(name = "v2 job linger",
                description = "Seconds a finished v2 job's TERMINATE replies are kept for repeated requests.", min = "0")
        int v2_job_linger_seconds() default 300;

        @AttributeDefinition(name = "v2 maximum message size",
                description = "Largest message, in bytes, a v2 host may send to a rank; a larger one is refused with"
                        + " MPIPROXY_ERR_MESSAGE_TOO_LARGE (201) and nothing of it is stored. 0 means no limit.",
                min = "0")
        long v2_max_message_bytes() default V2Settings.DEFAULT_MAX_MESSAGE_BYTES;
    }

    private static final Logger LOG = LoggerFactory.getLogger(ProxyComponent.class);

    /** The last good configuration of this bundle's proxy, kept across re-activations. */
    private static final CheckedConfiguration<Config> CONFIGURATIONS = new CheckedConfiguration<>(Config.class);

    private final CheckedConfiguration<Config> configurations;
    /** Why this instance does not start, {@code null} when it runs; then every other field but these is unset. */
    private final RejectedConfigurationException rejected;
    /** Where the one-line configuration problems go. */
    private final Consumer<String> problems;
    /** The configuration in force. */
    private volatile Config inForce;

    /** Every launcher, chosen per rank by the cores it declares. */
    private final LauncherTable launchers = new LauncherTable(LOG::warn);

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile DatagramTransport transport;

    /** Dynamic, so that updating or reconfiguring the channel bundle keeps the proxy and its jobs. */
    private volatile ChannelManager channels;

    private final ThreadPoolExecutor launches;
    private final ScheduledThreadPoolExecutor timer;
    private final ChannelManager current;
    private final V1Dispatcher dispatcher;
    private final RankLedger ledger;
    private final AtomicBoolean swept = new AtomicBoolean();
    private final ProtocolFront front;
    private volatile String v2Problem;
    /** The key files v2 serves with, the signing key first. */
    private volatile List<java.nio.file.Path> v2KeyFiles = List.of();
    private volatile RankOutputListener outputBridge;
    private final long startedNanos = System.nanoTime();
    private final long startupWaitNanos;
    private volatile boolean ready;
    private volatile long beforeReady;

    /**
     * Checks the raw configuration: bad values are logged in one line, and the proxy then starts
     * with the last good configuration, or, with none yet, does not start (the node does not
     * answer on its UDP port): {@link #activate()} then refuses. The refusal is not thrown from
     * here, because Declarative Services logs the full stack trace of whatever a constructor
     * throws, while it logs an activate method's exception as it is: one line.
     *
     * @param properties the raw configuration properties
     */
    @Activate
    public ProxyComponent(Map<String, Object> properties) {
        this(properties, CONFIGURATIONS, LOG::error);
    }

    /**
     * @param properties     the raw configuration properties
     * @param configurations checks them and remembers the last good configuration
     * @param problems       gets each one-line configuration problem
     */
    ProxyComponent(Map<String, Object> properties, CheckedConfiguration<Config> configurations,
                   Consumer<String> problems) {
        this(accept(properties, configurations, problems), configurations, problems);
    }

    /**
     * @param config the configuration
     * @throws IllegalArgumentException when a value is bad, naming its key and the value
     */
    ProxyComponent(Config config) {
        this(new Accepted(config, null), new CheckedConfiguration<>(Config.class), LOG::error);
    }

    /**
     * The outcome of checking an activation's configuration.
     *
     * @param config   the configuration to run with, {@code null} when rejected
     * @param rejected why the proxy does not start, {@code null} when it does
     */
    private record Accepted(Config config, RejectedConfigurationException rejected) {
    }

    private static Accepted accept(Map<String, Object> properties, CheckedConfiguration<Config> configurations,
                                   Consumer<String> problems) {
        try {
            return new Accepted(configurations.activation(properties, ProxyComponent::validate,
                    line -> problems.accept(PID + ": " + line)), null);
        } catch (RejectedConfigurationException e) {
            return new Accepted(null, e);
        }
    }

    private ProxyComponent(Accepted accepted, CheckedConfiguration<Config> configurations, Consumer<String> problems) {
        this.rejected = accepted.rejected();
        if (rejected != null) {
            // nothing starts: no threads, no ledger sweep, no socket use; activate() refuses
            this.configurations = configurations;
            this.problems = problems;
            this.startupWaitNanos = 0;
            this.launches = null;
            this.timer = null;
            this.current = null;
            this.dispatcher = null;
            this.ledger = null;
            this.front = null;
            return;
        }
        Config config = accepted.config();
        validate(config);
        this.configurations = configurations;
        this.problems = problems;
        this.inForce = config;
        this.startupWaitNanos = TimeUnit.SECONDS.toNanos(config.startup_wait_seconds());
        this.launches = LaunchPool.create(
                LaunchPool.threads(config.launch_threads(), Runtime.getRuntime().availableProcessors()),
                "mpiproxy-launch-");
        this.timer = timer();
        this.current = new CurrentChannelManager(() -> channels);
        this.dispatcher = new V1Dispatcher(current, settings(config), this::launcher, this::wakeup, launches, timer);
        dispatcher.supervision(supervision(config));
        this.ledger = new RankLedger(stateDirectory(config));
        dispatcher.ledger(ledger);
        this.front = new ProtocolFront(dispatcher, config.v1_enabled(), null);
        front.v2Enabled(config.v2_enabled());
        if (config.v2_enabled()) {
            try {
                Map<Integer, java.nio.file.Path> files = V2Config.keyFiles(config);
                startV2(V2Config.settings(config, files), settings(config));
                v2KeyFiles = List.copyOf(files.values());
            } catch (IllegalArgumentException e) {
                v2Problem = e.getMessage();
                org.slf4j.LoggerFactory.getLogger(ProxyComponent.class).error("protocol v2 is not started: {}",
                        v2Problem);
            }
        }
        timer.scheduleWithFixedDelay(this::sweepLogs, 0, LOG_SWEEP_MINUTES, TimeUnit.MINUTES);
    }

    private void startV2(V2Settings v2Settings, ProxySettings proxySettings) {
        V2Dispatcher v2 = new V2Dispatcher(current, proxySettings, v2Settings, this::launcher, this::wakeup,
                launches, timer, System::currentTimeMillis);
        front.startV2(v2);
        v2Problem = null;
        RankOutputListener bridge = outputBridge;
        if (bridge != null) {
            bindOutput(bridge);
        }
    }

    /**
     * Checks what the proxy's own checks cover, except the v2 keys (v2 may fail alone).
     *
     * @param config the configuration
     * @return {@code config}
     * @throws IllegalArgumentException naming the first bad key and its value
     */
    static Config validate(Config config) {
        if (config.startup_wait_seconds() < 0) {
            throw new IllegalArgumentException("startup.wait.seconds=" + config.startup_wait_seconds()
                    + " must be >= 0");
        }
        settings(config);
        supervision(config);
        LaunchPool.threads(config.launch_threads(), 1);
        stateDirectory(config);
        LogRetention.Limits.of(config.log_retention_days(), config.log_retention_megabytes());
        return config;
    }

    /**
     * Deletes the output of finished jobs beyond the retention limits; on the timer thread. A
     * failure is logged and the next sweep tries again.
     */
    void sweepLogs() {
        Config config = inForce;
        ProtocolFront f = front;
        if (config == null || f == null) {
            return;
        }
        java.nio.file.Path directory = dispatcher.settingsInForce().getKey().logDirectory();
        try {
            List<java.nio.file.Path> deleted = LogRetention.sweep(directory,
                    LogRetention.Limits.of(config.log_retention_days(), config.log_retention_megabytes()),
                    () -> liveJobs(f), java.time.Instant.now());
            if (!deleted.isEmpty()) {
                LOG.info("deleted the output of {} finished jobs beyond log.retention.days={} or"
                        + " log.retention.megabytes={}: {}", deleted.size(), config.log_retention_days(),
                        config.log_retention_megabytes(), deleted);
            }
        } catch (java.io.IOException | RuntimeException e) {
            LOG.warn("cannot apply the log retention to {}: {}", directory, e.toString());
        }
    }

    private static java.util.Set<Long> liveJobs(ProtocolFront front) {
        java.util.Set<Long> live = new java.util.HashSet<>();
        for (JobInfo job : front.jobs()) {
            for (org.mpiproxy.api.RankInfo r : job.ranks()) {
                if (r.state() != org.mpiproxy.api.RankInfo.State.EXITED
                        && r.state() != org.mpiproxy.api.RankInfo.State.FAILED) {
                    live.add(job.jobId());
                }
            }
        }
        return live;
    }

    /** @return the configuration in force */
    Config configuration() {
        return inForce;
    }

    /**
     * @param channels the channel manager
     * @param config   the configuration
     */
    ProxyComponent(ChannelManager channels, Config config) {
        this(config);
        bindChannels(channels);
    }

    /**
     * The first channel manager bound also clears what a crashed previous run left behind:
     * its rank processes and job directories, as recorded in the state directory.
     *
     * @param manager the channel manager
     */
    @Reference(name = "channels", cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY, unbind = "unbindChannels")
    void bindChannels(ChannelManager manager) {
        if (rejected == null && swept.compareAndSet(false, true)) {
            ledger.sweep(manager);
        }
        channels = manager;
    }

    /**
     * @param launcher   a launcher
     * @param properties its service properties: the cores it serves ({@link ProcessLauncher#CORES})
     */
    @Reference(name = "launchers", service = ProcessLauncher.class, cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY,
            unbind = "unbindLauncher", updated = "updatedLauncher")
    void bindLauncher(ProcessLauncher launcher, Map<String, Object> properties) {
        launchers.bind(launcher, properties);
    }

    void updatedLauncher(ProcessLauncher launcher, Map<String, Object> properties) {
        launchers.bind(launcher, properties);
    }

    void unbindLauncher(ProcessLauncher launcher) {
        launchers.unbind(launcher);
    }

    void unbindChannels(ChannelManager manager) {
        if (channels == manager) {
            channels = null;
        }
    }

    static java.nio.file.Path stateDirectory(Config config) {
        String configured = config.state_directory();
        if (configured != null && !configured.isBlank()) {
            try {
                return java.nio.file.Path.of(configured.trim());
            } catch (java.nio.file.InvalidPathException e) {
                throw new IllegalArgumentException("state.directory=" + configured + " is not a valid path: "
                        + e.getReason(), e);
            }
        }
        return ProxySettings.resolveLogDirectory("").resolveSibling("state");
    }

    /** @return why v2 did not start, or {@code null} when it runs or is disabled */
    String v2Problem() {
        return v2Problem;
    }

    /**
     * @return what the health check of the v2 key needs to know: whether v2 is enabled, why it
     *         did not start, and the key files it serves with (the signing key first)
     */
    NodeHealth.V2Keys v2Keys() {
        boolean enabled = inForce.v2_enabled();
        return new NodeHealth.V2Keys(enabled, enabled ? v2Problem : null, front.v2() == null ? List.of() : v2KeyFiles);
    }

    /**
     * Applies a changed configuration to jobs started from now on, without restarting. A bad value
     * is logged, naming its key and the value, and the last good configuration stays. New v2 keys
     * and node name apply at once (key rotation with jobs running), and v2 starts when it could
     * not before; the v2 clock skew, replay cache size and datagram size wait for the next start.
     */
    @Modified
    void modified(Map<String, Object> properties) {
        String problem;
        try {
            problem = reconfigure(configurations.typed(properties));
        } catch (IllegalArgumentException e) {
            problem = e.getMessage();
        }
        if (problem != null) {
            problems.accept(PID + ": " + problem + "; keeping the last good configuration");
        }
    }

    /**
     * @param config the new configuration
     * @return {@code null} when it was applied, else why not ({@code key=value ...})
     */
    String reconfigure(Config config) {
        ProxySettings next;
        SupervisionSettings supervision;
        V2Settings v2Next = null;
        String v2Failure = null;
        int launchThreads;
        try {
            validate(config);
            next = settings(config);
            supervision = supervision(config);
            launchThreads = LaunchPool.threads(config.launch_threads(), Runtime.getRuntime().availableProcessors());
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        List<java.nio.file.Path> keyFiles = List.of();
        if (config.v2_enabled()) {
            try {
                Map<Integer, java.nio.file.Path> files = V2Config.keyFiles(config);
                v2Next = V2Config.settings(config, files);
                keyFiles = List.copyOf(files.values());
            } catch (IllegalArgumentException e) {
                if (front.v2() != null) {
                    return e.getMessage();
                }
                // v2 is not running: there is no last good v2 configuration to keep
                v2Failure = e.getMessage();
            }
        }
        if (v2Failure != null) {
            v2Problem = v2Failure;
            org.slf4j.LoggerFactory.getLogger(ProxyComponent.class).error("protocol v2 is not started: {}",
                    v2Failure);
        }
        LaunchPool.resize(launches, launchThreads);
        dispatcher.settings(next);
        dispatcher.supervision(supervision);
        front.v1Enabled(config.v1_enabled());
        front.v2Enabled(config.v2_enabled());
        V2Dispatcher v2 = front.v2();
        if (v2 != null) {
            v2.settings(next);
            if (v2Next != null) {
                List<String> later = v2.reconfigure(v2Next);
                if (!later.isEmpty()) {
                    org.slf4j.LoggerFactory.getLogger(ProxyComponent.class).warn(
                            "{}: new values of {} take effect at the next start of the proxy", PID, later);
                }
            }
        } else if (v2Next != null) {
            startV2(v2Next, next);
            org.slf4j.LoggerFactory.getLogger(ProxyComponent.class).info("protocol v2 started");
        }
        inForce = config;
        if (v2Next != null) {
            v2KeyFiles = keyFiles;
        }
        configurations.remember(config);
        // new limits or a new log directory apply now, not at the next periodic sweep
        timer.execute(this::sweepLogs);
        return null;
    }

    /** @return how many ranks are started at once */
    int launchThreads() {
        return launches.getMaximumPoolSize();
    }

    /** @return the settings in force and the supervision settings of new jobs */
    Map.Entry<ProxySettings, SupervisionSettings> settingsInForce() {
        return dispatcher.settingsInForce();
    }

    static SupervisionSettings supervision(Config config) {
        if (config.job_timeout_seconds() < 0) {
            throw new IllegalArgumentException("job.timeout.seconds=" + config.job_timeout_seconds()
                    + " must be >= 0");
        }
        if (config.host_silence_seconds() < 0) {
            throw new IllegalArgumentException("host.silence.seconds=" + config.host_silence_seconds()
                    + " must be >= 0");
        }
        return new SupervisionSettings(config.abort_on_failure(), Duration.ofSeconds(config.job_timeout_seconds()),
                Duration.ofSeconds(config.host_silence_seconds()));
    }

    /**
     * Refuses to start when the configuration was rejected at construction (Declarative
     * Services then logs the exception's message, which is the line already logged, and the
     * component stays inactive until its configuration changes).
     *
     * @throws RejectedConfigurationException when a value is bad and there is no last good configuration
     */
    @Activate
    void activate() {
        if (rejected != null) {
            throw rejected;
        }
    }

    /** Stops every rank, removes the channels and stops the proxy's threads. */
    @Deactivate
    void deactivate() {
        if (front != null) {
            front.close();
        }
    }

    static ProxySettings settings(Config config) {
        if (config.terminate_timeout_seconds() < 0) {
            throw new IllegalArgumentException("terminate.timeout.seconds=" + config.terminate_timeout_seconds()
                    + " must be >= 0");
        }
        if (config.stop_grace_seconds() < 0) {
            throw new IllegalArgumentException("stop.grace.seconds=" + config.stop_grace_seconds() + " must be >= 0");
        }
        return new ProxySettings(ProxySettings.resolveLogDirectory(config.log_directory()),
                config.hold_limit_bytes(), Duration.ofSeconds(config.terminate_timeout_seconds()),
                Duration.ofSeconds(config.stop_grace_seconds()));
    }

    private ProcessLauncher launcher(int coreId) {
        return launchers.forCore(coreId);
    }

    private void wakeup() {
        DatagramTransport t = transport;
        if (t != null) {
            t.wakeup();
        }
    }

    private static ScheduledThreadPoolExecutor timer() {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, daemonThreads("mpiproxy-terminate-"));
        timer.setRemoveOnCancelPolicy(true);
        return timer;
    }

    static ThreadFactory daemonThreads(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    @Override
    public void onDatagram(ByteBuffer datagram, InetSocketAddress source, DatagramTransport replies) {
        if (!ready && !becameReady()) {
            beforeReady++;
            return;
        }
        front.onDatagram(datagram, source, replies);
    }

    /**
     * The proxy serves once the channel manager (after its start-up sweep) and a launcher for core 0
     * are bound, or when the start-up wait is over without them. Later absences, such as a
     * launcher being updated, are answered with errors rather than silence.
     */
    private boolean becameReady() {
        boolean complete = channels != null && launchers.forCore(0) != null;
        if (!complete && System.nanoTime() - startedNanos < startupWaitNanos) {
            return false;
        }
        ready = true;
        org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(ProxyComponent.class);
        if (complete) {
            log.info("serving requests ({} datagrams dropped while starting)", beforeReady);
        } else {
            log.warn("serving requests without {} after waiting {} s for it ({} datagrams dropped while starting)",
                    channels == null ? "a channel manager" : "a launcher for core 0",
                    TimeUnit.NANOSECONDS.toSeconds(startupWaitNanos), beforeReady);
        }
        return true;
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

    /**
     * Lines of ranks of v2 jobs that asked for them go to their host (V2OutputStreams), through
     * the {@link RankOutputBridge} the launchers call.
     *
     * @param bridge the proxy bundle's output listener
     */
    @Reference(target = "(component.name=" + RankOutputBridge.NAME + ")", cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY, unbind = "unbindOutput")
    void bindOutput(RankOutputListener bridge) {
        outputBridge = bridge;
        V2Dispatcher v2 = rejected == null ? front.v2() : null;
        if (bridge instanceof RankOutputBridge && v2 != null) {
            ((RankOutputBridge) bridge).target(v2.outputListener());
        }
    }

    void unbindOutput(RankOutputListener bridge) {
        if (outputBridge == bridge) {
            outputBridge = null;
        }
        if (bridge instanceof RankOutputBridge) {
            ((RankOutputBridge) bridge).target(null);
        }
    }

    @Override
    public List<JobInfo> jobs() {
        return front.jobs();
    }

    @Override
    public Map<String, Long> counters() {
        Map<String, Long> all = front.counters();
        all.put("datagrams.before.ready", beforeReady);
        return all;
    }
}
