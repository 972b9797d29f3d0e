package org.mpiproxy.proxy.internal;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.HealthResult;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.ProgramNames;
import org.mpiproxy.api.ProxyControl;
import org.mpiproxy.api.ProxyStatus;
import org.mpiproxy.api.RankInfo;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Operator actions: signals ranks (each rank's process group), finds rank output under the
 * proxy's log directory (it reads the proxy's own configuration), starts console jobs through
 * a {@link ConsoleHost} and terminates them once every rank has ended, and runs the health checks.
 */
@Component(name = "org.mpiproxy.control", configurationPid = ProxyComponent.PID,
        configurationPolicy = ConfigurationPolicy.OPTIONAL, service = ProxyControl.class)
public class ProxyControlComponent implements ProxyControl {

    private static final Logger LOG = LoggerFactory.getLogger(ProxyControlComponent.class);
    private static final Duration REPLY_TIMEOUT = Duration.ofSeconds(30);
    private static final long WATCH_PERIOD_MILLIS = 250;

    private final ProxyStatus status;
    private final HealthCheckComponent health;
    private final RankSignals signals;
    private final ScheduledThreadPoolExecutor watcher;
    private final Map<Long, ConsoleJob> consoleJobs = new ConcurrentHashMap<>();
    private volatile Path logDirectory;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    volatile DatagramTransport transport;

    /** A console job and its host, until every rank has ended and been terminated. */
    private record ConsoleJob(ConsoleHost host, Map<Integer, Integer> cores) {
    }

    /**
     * @param status the proxy's view of its jobs
     * @param health the health checks
     * @param config the proxy's configuration (for its log directory)
     */
    @Activate
    public ProxyControlComponent(@Reference ProxyStatus status, @Reference HealthCheckComponent health,
                                 ProxyConfig config) {
        this(status, health, new RankSignals(), ProxySettings.resolveLogDirectory(config.log_directory()));
    }

    ProxyControlComponent(ProxyStatus status, HealthCheckComponent health, RankSignals signals, Path logDirectory) {
        this.status = status;
        this.health = health;
        this.signals = signals;
        this.logDirectory = logDirectory;
        this.watcher = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "mpiproxy-console-jobs");
            t.setDaemon(true);
            return t;
        });
        watcher.scheduleWithFixedDelay(this::terminateEndedConsoleJobs, WATCH_PERIOD_MILLIS, WATCH_PERIOD_MILLIS,
                TimeUnit.MILLISECONDS);
    }

    /** Follows the proxy's log directory; a bad one is logged and the last good one stays. */
    @Modified
    void modified(ProxyConfig config) {
        try {
            logDirectory = ProxySettings.resolveLogDirectory(config.log_directory());
        } catch (IllegalArgumentException e) {
            LOG.error("{}: {}; keeping the log directory {}", ProxyComponent.PID, e.getMessage(), logDirectory);
        }
    }

    /** Stops watching console jobs and closes their hosts; their ranks keep running. */
    @Deactivate
    void deactivate() {
        watcher.shutdownNow();
        for (ConsoleJob job : consoleJobs.values()) {
            job.host().close();
        }
        consoleJobs.clear();
    }

    @Override
    public List<Integer> signal(long jobId, int rankId, String signal) {
        String name = RankSignals.normalize(signal);
        JobInfo job = job(jobId);
        List<RankInfo> targets = new ArrayList<>();
        for (RankInfo rank : job.ranks()) {
            if (rankId == 0 || rank.rankId() == rankId) {
                targets.add(rank);
            }
        }
        if (targets.isEmpty()) {
            throw new IllegalArgumentException("job " + Job.hex(jobId) + " has no rank " + rankId);
        }
        List<Integer> signalled = new ArrayList<>();
        // back to back (kill(2), microseconds apart): a rank the first signal ends makes supervision
        // stop the others (abort.on.failure), which must not find them gone first
        for (RankInfo rank : targets) {
            if (rank.state() != RankInfo.State.RUNNING && rank.state() != RankInfo.State.TERMINATING) {
                continue;
            }
            try {
                if (signals.send(rank.pid(), name)) {
                    signalled.add(rank.rankId());
                    LOG.info("job {} rank {}: sent SIG{} to the process group of pid {}", Job.hex(jobId),
                            rank.rankId(), name, rank.pid());
                }
            } catch (IOException e) {
                throw new IllegalStateException("cannot signal rank " + rank.rankId() + " (pid " + rank.pid() + "): "
                        + e.getMessage(), e);
            }
        }
        return signalled;
    }

    @Override
    public Path outputFile(long jobId, int rankId, boolean stderr) {
        JobInfo job = job(jobId);
        boolean known = job.ranks().stream().anyMatch(r -> r.rankId() == rankId);
        if (!known) {
            throw new IllegalArgumentException("job " + Job.hex(jobId) + " has no rank " + rankId);
        }
        return logDirectory.resolve("job-" + Job.hex(jobId)).resolve("rank-" + rankId + (stderr ? ".err" : ".out"));
    }

    @Override
    public JobInfo exec(String program, List<String> args, List<Integer> cores) throws IOException {
        String problem = ProgramNames.problem(program);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        if (cores.isEmpty()) {
            throw new IllegalArgumentException("a job needs at least one rank");
        }
        for (int core : cores) {
            if (core < 0 || core > 0xffff) {
                throw new IllegalArgumentException("core " + core + " out of range 0..65535");
            }
        }
        byte[] command = ConsoleHost.commandBytes(program, args);
        DatagramTransport t = transport;
        if (t == null) {
            throw new IllegalStateException("the proxy is not listening: no UDP transport runs");
        }
        ConsoleHost host = new ConsoleHost(t.localAddress(), REPLY_TIMEOUT);
        boolean watched = false;
        try {
            TreeMap<Integer, ConsoleHost.Reply> replies = host.exec(command, cores);
            JobInfo job = ownedBy(host.owner());
            if (job == null) {
                List<String> reasons = new ArrayList<>();
                replies.values().forEach(r -> reasons.add("rank " + r.rankId() + ": " + r.text()));
                throw new IllegalArgumentException("the proxy refused the job: " + String.join("; ", reasons));
            }
            Map<Integer, Integer> byRank = new TreeMap<>();
            for (int r = 1; r <= cores.size(); r++) {
                byRank.put(r, cores.get(r - 1));
            }
            consoleJobs.put(job.jobId(), new ConsoleJob(host, byRank));
            watched = true;
            List<String> refused = new ArrayList<>();
            replies.values().stream().filter(r -> r.result() != 0)
                    .forEach(r -> refused.add("rank " + r.rankId() + ": " + r.text()));
            if (!refused.isEmpty()) {
                throw new IllegalArgumentException("job " + Job.hex(job.jobId()) + " could not start every rank: "
                        + String.join("; ", refused));
            }
            LOG.info("job {} started from the console: {} on cores {}", Job.hex(job.jobId()),
                    new String(command, java.nio.charset.StandardCharsets.UTF_8), cores);
            return job;
        } finally {
            if (!watched) {
                host.close();
            }
        }
    }

    /** On the watcher thread: TERMINATE console jobs whose ranks have all ended, so their files go. */
    void terminateEndedConsoleJobs() {
        if (consoleJobs.isEmpty()) {
            return;
        }
        Map<Long, JobInfo> live = new TreeMap<>();
        for (JobInfo j : status.jobs()) {
            live.put(j.jobId(), j);
        }
        for (var entry : consoleJobs.entrySet()) {
            JobInfo job = live.get(entry.getKey());
            if (job != null && !allEnded(job)) {
                continue;
            }
            ConsoleJob console = entry.getValue();
            consoleJobs.remove(entry.getKey());
            try {
                if (job != null) {
                    console.host().terminate(console.cores());
                }
            } catch (IOException | RuntimeException e) {
                LOG.warn("terminating console job {} failed: {}", Job.hex(entry.getKey()), e.toString());
            } finally {
                console.host().close();
            }
        }
    }

    private static boolean allEnded(JobInfo job) {
        for (RankInfo r : job.ranks()) {
            if (r.state() == RankInfo.State.RUNNING || r.state() == RankInfo.State.TERMINATING) {
                return false;
            }
        }
        return true;
    }

    /** @return the ids of jobs started from the console that are not terminated yet */
    List<Long> consoleJobIds() {
        return List.copyOf(new TreeSet<>(consoleJobs.keySet()));
    }

    @Override
    public List<String> programs() {
        TreeSet<String> names = new TreeSet<>();
        for (Path dir : health.programDirectories().values()) {
            try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
                for (Path f : files) {
                    String name = f.getFileName().toString();
                    if (!Files.isRegularFile(f)) {
                        continue;
                    }
                    if (ProgramNames.isImage(name)) {
                        // the image of a program for remote cores: the program's name is offered
                        String program = name.substring(0, name.length() - ProgramNames.IMAGE_SUFFIX.length());
                        if (ProgramNames.problem(program) == null) {
                            names.add(program);
                        }
                    } else if (Files.isExecutable(f) && ProgramNames.problem(name) == null) {
                        names.add(name);
                    }
                }
            } catch (IOException e) {
                LOG.debug("cannot list {}", dir, e);
            }
        }
        return Collections.unmodifiableList(new ArrayList<>(names));
    }

    @Override
    public List<HealthResult> health() {
        return health.check();
    }

    private JobInfo job(long jobId) {
        for (JobInfo j : status.jobs()) {
            if (j.jobId() == jobId) {
                return j;
            }
        }
        throw new IllegalArgumentException("no job " + Job.hex(jobId));
    }

    private JobInfo ownedBy(String owner) {
        for (JobInfo j : status.jobs()) {
            if (owner.equals(j.owner())) {
                return j;
            }
        }
        return null;
    }

    private static boolean allKnown(JobInfo job) {
        return !job.ranks().isEmpty();
    }
}
