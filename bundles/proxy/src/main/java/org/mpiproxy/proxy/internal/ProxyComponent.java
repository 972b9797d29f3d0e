package org.mpiproxy.proxy.internal;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.Designate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Wires the v1 and v2 dispatchers to the channel manager, the launchers and the UDP transport. */
@Component(name = ProxyComponent.PID, immediate = true, enabled = false, service = {DatagramHandler.class, ProxyStatus.class})
@Designate(ocd = ProxyConfig.class)
public class ProxyComponent implements DatagramHandler, ProxyStatus {

    /** Configuration PID and component name. */
    public static final String PID = "org.mpiproxy.proxy";

    /** Minutes between two sweeps of the log directory (the first runs at start; a configuration change sweeps at once). */
    static final int LOG_SWEEP_MINUTES = 10;

    private static final Logger LOG = LoggerFactory.getLogger(ProxyComponent.class);

    /** The last good configuration of this bundle's proxy, kept across re-activations. */
    private static final CheckedConfiguration<ProxyConfig> CONFIGURATIONS = new CheckedConfiguration<>(PID, ProxyConfig.class, LOG::warn);

    private final CheckedConfiguration<ProxyConfig> configurations;
    /** Why this instance does not start, {@code null} when it runs; then every other field but these is unset. */
    private final RejectedConfigurationException rejected;
    /** Where the one-line configuration problems go. */
    private final Consumer<String> problems;
    /** The configuration in force. */
    private volatile ProxyConfig inForce;

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
    /** Jobs a previous revision handed over: running, so the ledger's sweep leaves them. */
    private final Set<Long> adopted;
    /** What a previous revision handed over, until it is taken over (once a channel manager is bound). */
    private final PendingHandOver handedOver = new PendingHandOver();
    private final ProtocolFront front;
    private volatile String v2Problem;
    /** The key files v2 serves with, the signing key first. */
    private volatile List<java.nio.file.Path> v2KeyFiles = List.of();
    private volatile RankOutputListener outputBridge;
    /** The output of ranks a previous start of the node left, held until the bridge is bound. */
    private final org.mpiproxy.process.OutputListeners adoptedOutput = new org.mpiproxy.process.OutputListeners();
    /** Set when this revision hands its jobs over: see {@link #unbindOutput}. */
    private volatile boolean handingOver;
    private final StartupGate startup;

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
    ProxyComponent(Map<String, Object> properties, CheckedConfiguration<ProxyConfig> configurations,
                   Consumer<String> problems) {
        this(ProxyConfigs.accept(properties, configurations, problems), configurations, problems);
    }

    /**
     * @param config the configuration
     * @throws IllegalArgumentException when a value is bad, naming its key and the value
     */
    ProxyComponent(ProxyConfig config) {
        this(new ProxyConfigs.Accepted(config, null), new CheckedConfiguration<>(ProxyConfig.class), LOG::error);
    }

    private ProxyComponent(ProxyConfigs.Accepted accepted, CheckedConfiguration<ProxyConfig> configurations, Consumer<String> problems) {
        this.rejected = accepted.rejected();
        if (rejected != null) {
            // nothing starts: no threads, no ledger sweep, no socket use; activate() refuses
            this.configurations = configurations;
            this.problems = problems;
            this.startup = null;
            this.launches = null;
            this.timer = null;
            this.current = null;
            this.dispatcher = null;
            this.ledger = null;
            this.front = null;
            this.adopted = Set.of();
            return;
        }
        ProxyConfig config = accepted.config();
        ProxyConfigs.validate(config);
        this.configurations = configurations;
        this.problems = problems;
        this.inForce = config;
        ProxyDirectories.applyLogAccess(config, LOG);
        this.launches = LaunchPool.create(LaunchPool.threads(config.launch_threads(),
                Runtime.getRuntime().availableProcessors()), "mpiproxy-launch-");
        this.timer = LaunchPool.timer("mpiproxy-terminate-");
        this.current = new CurrentChannelManager(() -> channels);
        this.dispatcher = new V1Dispatcher(current, ProxyConfigs.settings(config), this::launcher, this::wakeup, launches,
                timer);
        dispatcher.supervision(ProxyConfigs.supervision(config));
        this.ledger = new RankLedger(ProxyConfigs.stateDirectory(config));
        dispatcher.ledger(ledger);
        KeeperPolicy.tell(config);
        Map<String, Object> state = NodeRestart.takeAny(config, adoptedOutput);
        this.adopted = state != null ? HandOver.jobIds(state) : Set.of();
        handedOver.set(state);
        // the node was serving a moment ago: taken-over jobs are served at once, EXECs wait for a launcher
        this.startup = new StartupGate(TimeUnit.SECONDS.toNanos(config.startup_wait_seconds()), () -> channels != null,
                () -> launchers.forCore(0) != null, !adopted.isEmpty());
        this.front = new ProtocolFront(dispatcher, config.v1_enabled(), null);
        front.v2Enabled(config.v2_enabled());
        if (config.v2_enabled()) {
            try {
                Map<Integer, java.nio.file.Path> files = V2Config.keyFiles(config);
                startV2(V2Config.settings(config, files), ProxyConfigs.settings(config));
                v2KeyFiles = List.copyOf(files.values());
            } catch (IllegalArgumentException e) {
                v2Problem = e.getMessage();
                LOG.error("protocol v2 is not started: {}", v2Problem);
            }
        }
        timer.scheduleWithFixedDelay(this::sweepLogs, 0, LOG_SWEEP_MINUTES, TimeUnit.MINUTES);
    }

    private void startV2(V2Settings v2Settings, ProxySettings proxySettings) {
        V2Dispatcher v2 = new V2Dispatcher(current, proxySettings, v2Settings, this::launcher, this::wakeup,
                launches, timer, System::currentTimeMillis);
        HandOver.takeV2Output(handedOver.get(), v2);
        front.startV2(v2);
        v2Problem = null;
        RankOutputListener bridge = outputBridge;
        if (bridge != null) {
            bindOutput(bridge);
        }
    }

    /** Deletes finished jobs' output and users' staged programs beyond the retention limits, on the timer. */
    void sweepLogs() {
        ProxyConfig config = inForce;
        ProtocolFront f = front;
        if (config != null && f != null) {
            LogRetention.sweepFinished(dispatcher.settingsInForce().getKey().logDirectory(),
                    LogRetention.Limits.of(config.log_retention_days(), config.log_retention_megabytes()), f::jobs);
            StagedRetention.sweepUsers(StagedRetention.Limits.of(config), f::jobs);
        }
    }

    /** @return the configuration in force */
    ProxyConfig configuration() {
        return inForce;
    }

    /**
     * @param channels the channel manager
     * @param config   the configuration
     */
    ProxyComponent(ChannelManager channels, ProxyConfig config) {
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
            ledger.sweep(manager, adopted);
        }
        channels = manager;
        takeOver();
    }

    /**
     * Takes over the jobs a previous revision handed over, once: when the channel manager is bound
     * (a channel of another api revision is mapped again through it), or when the start-up wait
     * ended without one.
     */
    private void takeOver() {
        handedOver.takeOver(state -> {
            dispatcher.adopt(state);
            HandOver.takeV2(state, front.v2(), java.time.Duration.ofSeconds(inForce.stop_grace_seconds()));
        });
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
            problems.accept(configurations.refused(PID + ": " + problem + "; keeping the last good configuration"));
        }
    }

    /**
     * @param config the new configuration
     * @return {@code null} when it was applied, else why not ({@code key=value ...})
     */
    String reconfigure(ProxyConfig config) {
        ProxySettings next;
        SupervisionSettings supervision;
        V2Settings v2Next = null;
        String v2Failure = null;
        int launchThreads;
        try {
            ProxyConfigs.validate(config);
            next = ProxyConfigs.settings(config);
            supervision = ProxyConfigs.supervision(config);
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
            LOG.error("protocol v2 is not started: {}", v2Failure);
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
                    LOG.warn("{}: new values of {} take effect at the next start of the proxy", PID, later);
                }
            }
        } else if (v2Next != null) {
            startV2(v2Next, next);
            LOG.info("protocol v2 started");
        }
        inForce = config;
        ProxyDirectories.applyLogAccess(config, LOG);
        if (v2Next != null) {
            v2KeyFiles = keyFiles;
        }
        configurations.remember(config);
        KeeperPolicy.tell(config);
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

    /**
     * Stops the proxy's threads. When the framework keeps running (an update of this bundle, a
     * restart of this component) and {@code handover.seconds} is not 0, the jobs of both protocols
     * are left running for the next revision ({@link HandOver}), which takes them over; when Karaf
     * stops, they are left for its next start ({@link NodeRestart}); otherwise every rank is
     * stopped and the channels removed.
     *
     * @param context this bundle's context
     */
    @Deactivate
    void deactivate(BundleContext context) {
        ProxyConfig config = inForce;
        if (front == null) {
            return;
        }
        boolean karafStops = context.getBundle(0).getState() == Bundle.STOPPING;
        handingOver = karafStops ? NodeRestart.keepsJobs(config) : config.handover_seconds() > 0;
        NodeRestart.stop(front, config, karafStops);
    }

    /** Stops every rank, removes the channels and stops the proxy's threads. */
    void deactivate() {
        if (front != null) {
            front.close();
        }
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

    @Override
    public void onDatagram(ByteBuffer datagram, InetSocketAddress source, DatagramTransport replies) {
        if (handedOver.pending()) {
            if (startup.waitedLongEnough()) {
                takeOver();
            }
            if (handedOver.pending()) {
                // not taken over yet, or under way on the thread that bound the channel manager
                startup.dropped();
                return;
            }
        }
        if (startup.admits(datagram)) {
            front.onDatagram(datagram, source, replies);
        }
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
        adoptedOutput.add(bridge);
        V2Dispatcher v2 = rejected == null ? front.v2() : null;
        if (bridge instanceof RankOutputBridge && v2 != null) {
            ((RankOutputBridge) bridge).target(v2.outputListener());
        }
    }

    void unbindOutput(RankOutputListener bridge) {
        adoptedOutput.remove(bridge);
        if (outputBridge == bridge) {
            outputBridge = null;
        }
        if (bridge instanceof RankOutputBridge && !handingOver) {
            // handing over, the target keeps the lines that still come for the next revision (LateOutput)
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
        all.put("datagrams.before.ready", startup.droppedBeforeReady());
        return all;
    }
}
