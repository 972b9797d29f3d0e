package org.mpiproxy.proxy.internal;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;

import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.ProxyStatus;
import org.mpiproxy.api.RankInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one {@link JobMXBean} registered per running job: {@link #reconcile()} registers the
 * jobs the proxy lists that have a rank that has not ended, and unregisters the others (a job
 * ends when every rank has exited or failed, or when the proxy forgets it). The dispatchers are
 * not involved: they are read through {@link ProxyStatus} only. {@link #reconcile()} and
 * {@link #close()} are synchronized; any thread.
 */
final class JobMBeans {

    private static final Logger LOG = LoggerFactory.getLogger(JobMBeans.class);

    private final ProxyStatus status;
    private final MBeanServer server;
    private final Map<Long, ObjectName> registered = new HashMap<>();

    JobMBeans(ProxyStatus status, MBeanServer server) {
        this.status = status;
        this.server = server;
    }

    /**
     * @param jobId a job id
     * @return {@code org.mpiproxy:type=Job,id=<16 hex>}
     */
    static ObjectName name(long jobId) {
        try {
            return new ObjectName(JobMXBean.OBJECT_NAME_PREFIX + Job.hex(jobId));
        } catch (MalformedObjectNameException e) {
            throw new IllegalStateException(e);
        }
    }

    /** @return {@code true} while a rank of the job has not ended */
    static boolean isRunning(JobInfo job) {
        for (RankInfo r : job.ranks()) {
            if (r.state() == RankInfo.State.RUNNING || r.state() == RankInfo.State.TERMINATING) {
                return true;
            }
        }
        return false;
    }

    /** Registers the MBeans of running jobs and unregisters those of ended ones. */
    synchronized void reconcile() {
        Set<Long> running = new HashSet<>();
        for (JobInfo job : status.jobs()) {
            if (isRunning(job)) {
                running.add(job.jobId());
            }
        }
        for (Long id : new ArrayList<>(registered.keySet())) {
            if (!running.contains(id)) {
                unregister(registered.remove(id));
            }
        }
        for (Long id : running) {
            if (!registered.containsKey(id)) {
                ObjectName name = name(id);
                try {
                    if (server.isRegistered(name)) {
                        server.unregisterMBean(name);
                    }
                    server.registerMBean(new JobManagement(status, id), name);
                    registered.put(id, name);
                } catch (JMException e) {
                    LOG.warn("cannot register {}: {}", name, e.toString());
                }
            }
        }
    }

    /** @return the ids of the jobs whose MBean is registered */
    synchronized Set<Long> registered() {
        return Set.copyOf(registered.keySet());
    }

    /** Unregisters every job MBean. */
    synchronized void close() {
        registered.values().forEach(this::unregister);
        registered.clear();
    }

    private void unregister(ObjectName name) {
        try {
            if (server.isRegistered(name)) {
                server.unregisterMBean(name);
            }
        } catch (JMException e) {
            LOG.warn("cannot unregister {}: {}", name, e.toString());
        }
    }

    /** A job's MBean: reads the job from the proxy on every access; the last view once it is gone. */
    static final class JobManagement implements JobMXBean {

        private final ProxyStatus status;
        private final long jobId;
        private volatile JobInfo last;

        JobManagement(ProxyStatus status, long jobId) {
            this.status = status;
            this.jobId = jobId;
            this.last = new JobInfo(jobId, "", "", Instant.EPOCH, List.of());
        }

        private JobInfo job() {
            for (JobInfo j : status.jobs()) {
                if (j.jobId() == jobId) {
                    last = j;
                    return j;
                }
            }
            return last;
        }

        @Override
        public String getJobId() {
            return Job.hex(jobId);
        }

        @Override
        public String getProtocol() {
            return job().protocol();
        }

        @Override
        public String getOwner() {
            return job().owner();
        }

        @Override
        public String getStarted() {
            return job().started().toString();
        }

        @Override
        public int[] getRankIds() {
            return job().ranks().stream().mapToInt(RankInfo::rankId).toArray();
        }

        @Override
        public String[] getStates() {
            return job().ranks().stream().map(r -> r.state().name()).toArray(String[]::new);
        }

        @Override
        public int[] getExitStatuses() {
            return job().ranks().stream().mapToInt(RankInfo::exitStatus).toArray();
        }

        @Override
        public long[] getPids() {
            return job().ranks().stream().mapToLong(RankInfo::pid).toArray();
        }

        @Override
        public long getBytesIn() {
            return job().ranks().stream().mapToLong(RankInfo::bytesIn).sum();
        }

        @Override
        public long getBytesOut() {
            return job().ranks().stream().mapToLong(RankInfo::bytesOut).sum();
        }

        @Override
        public List<ProxyMXBean.RankData> getRanks() {
            return ProxyManagement.ranks(job());
        }
    }
}
