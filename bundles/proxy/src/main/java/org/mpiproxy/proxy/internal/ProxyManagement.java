package org.mpiproxy.proxy.internal;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.mpiproxy.api.HealthResult;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.ProxyControl;
import org.mpiproxy.api.ProxyStatus;
import org.mpiproxy.api.RankInfo;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Registers {@link ProxyMXBean} with the platform MBeanServer, which Karaf's JMX connector serves. */
@Component(name = "org.mpiproxy.management", immediate = true, service = {})
public class ProxyManagement implements ProxyMXBean {

    private static final Logger LOG = LoggerFactory.getLogger(ProxyManagement.class);

    /**
     * The counters of retransmitted datagrams: a v2 host repeats a request whose reply it lost
     * (a repeated EXEC or SEND the proxy recognises), and the proxy sends rank data again that a
     * host asks for again (a RECV from an earlier sequence). v1 has no retransmission.
     */
    static final List<String> RETRANSMISSION_COUNTERS = List.of(V2Counter.EXEC_DUPLICATE.key(),
            V2Counter.SEND_DUPLICATE.key(), V2Counter.RECV_RESENT.key());

    /** How often the job MBeans follow the proxy's jobs. */
    private static final long JOB_MBEANS_PERIOD_MILLIS = 250;

    private final ProxyStatus status;
    private final ProxyControl control;
    private final MBeanServer server;
    private final ObjectName name;
    private final JobMBeans jobMBeans;
    private final java.util.concurrent.ScheduledExecutorService jobWatcher;

    /**
     * Registers the MBean, replacing a stale registration.
     *
     * @param status  the proxy's jobs and counters
     * @param control the health checks
     * @throws JMException when the MBean cannot be registered
     */
    @Activate
    public ProxyManagement(@Reference ProxyStatus status, @Reference ProxyControl control) throws JMException {
        this(status, control, ManagementFactory.getPlatformMBeanServer());
    }

    ProxyManagement(ProxyStatus status, ProxyControl control, MBeanServer server) throws JMException {
        this.status = status;
        this.control = control;
        this.server = server;
        this.name = new ObjectName(OBJECT_NAME);
        if (server.isRegistered(name)) {
            server.unregisterMBean(name);
        }
        server.registerMBean(this, name);
        this.jobMBeans = new JobMBeans(status, server);
        this.jobWatcher = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "mpiproxy-jmx-jobs");
            t.setDaemon(true);
            return t;
        });
        jobWatcher.scheduleWithFixedDelay(this::reconcileJobs, 0, JOB_MBEANS_PERIOD_MILLIS,
                java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    private void reconcileJobs() {
        try {
            jobMBeans.reconcile();
        } catch (RuntimeException e) {
            LOG.warn("cannot follow the jobs' MBeans: {}", e.toString());
        }
    }

    /** @return the job MBeans */
    JobMBeans jobMBeans() {
        return jobMBeans;
    }

    @Deactivate
    void deactivate() {
        jobWatcher.shutdownNow();
        try {
            jobWatcher.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        jobMBeans.close();
        try {
            server.unregisterMBean(name);
        } catch (JMException e) {
            LOG.warn("cannot unregister {}: {}", name, e.toString());
        }
    }

    @Override
    public Map<String, Long> getCounters() {
        return status.counters();
    }

    private long counter(String key) {
        return status.counters().getOrDefault(key, 0L);
    }

    @Override
    public long getDatagramsIn() {
        return counter("datagrams.in");
    }

    @Override
    public long getBytesToRanks() {
        return counter("send.bytes");
    }

    @Override
    public long getBytesFromRanks() {
        return counter("recv.bytes");
    }

    @Override
    public long getInvalidDatagrams() {
        long sum = 0;
        for (Map.Entry<String, Long> e : status.counters().entrySet()) {
            if (e.getKey().startsWith("invalid.")) {
                sum += e.getValue();
            }
        }
        return sum;
    }

    @Override
    public long getRefusedExecs() {
        return counter("exec.rejected");
    }

    @Override
    public long getRingsFull() {
        return counter("send.held") + counter("send.dropped");
    }

    @Override
    public long getRetransmissions() {
        Map<String, Long> counters = status.counters();
        long sum = 0;
        for (String key : RETRANSMISSION_COUNTERS) {
            sum += counters.getOrDefault(key, 0L);
        }
        return sum;
    }

    @Override
    public int getJobCount() {
        return status.jobs().size();
    }

    @Override
    public List<JobData> getJobs() {
        List<JobData> jobs = new ArrayList<>();
        for (JobInfo j : status.jobs()) {
            jobs.add(new JobData(Job.hex(j.jobId()), j.protocol(), j.owner(), j.started().toString(), ranks(j)));
        }
        return jobs;
    }

    static List<RankData> ranks(JobInfo job) {
        List<RankData> ranks = new ArrayList<>();
        for (RankInfo r : job.ranks()) {
            ranks.add(new RankData(r.rankId(), r.coreId(), r.program(), r.pid(), r.state().name(), r.exitStatus(),
                    r.bytesIn(), r.bytesOut()));
        }
        return ranks;
    }

    @Override
    public String getHealth() {
        return HealthResult.worst(control.health()).name();
    }

    @Override
    public List<String> getHealthReport() {
        List<String> lines = new ArrayList<>();
        for (HealthResult r : control.health()) {
            lines.add(r.check() + " " + r.status() + " " + r.message());
        }
        return lines;
    }
}
