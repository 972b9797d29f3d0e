package org.mpiproxy.proxy.internal;

import java.util.List;
import java.util.Map;

/**
 * The proxy over JMX as {@code org.mpiproxy:type=Proxy}: counters, jobs with their ranks, and
 * health; each running job also has its own {@link JobMXBean}. Every attribute is an open type, readable by any JMX client (jconsole, jmxterm).
 */
public interface ProxyMXBean {

    /** Object name of the proxy's MBean. */
    String OBJECT_NAME = "org.mpiproxy:type=Proxy";

    /** @return every counter of the proxy by name */
    Map<String, Long> getCounters();

    /** @return datagrams received by the proxy */
    long getDatagramsIn();

    /** @return payload bytes relayed to ranks (SEND) */
    long getBytesToRanks();

    /** @return payload bytes relayed from ranks (RECV replies) */
    long getBytesFromRanks();

    /** @return datagrams dropped as invalid (short, unknown operation, datatype, count, rank, oversize) */
    long getInvalidDatagrams();

    /** @return EXEC requests refused */
    long getRefusedExecs();

    /** @return SENDs that found their rank's ring full (held or dropped) */
    long getRingsFull();

    /**
     * @return retransmitted datagrams (protocol v2; v1 has none): requests a host repeated because
     *         it lost the reply ({@code v2.exec.duplicate}, {@code v2.send.duplicate}) and rank
     *         data sent again ({@code v2.recv.resent})
     */
    long getRetransmissions();

    /** @return live and recently finished jobs */
    int getJobCount();

    /** @return live and recently finished jobs with their ranks */
    List<JobData> getJobs();

    /** @return OK, WARN or CRITICAL: the worst result of the health checks */
    String getHealth();

    /** @return one line per health check: {@code check STATUS message} */
    List<String> getHealthReport();

    /** A job, as an open-type composite. */
    final class JobData {
        private final String jobId;
        private final String protocol;
        private final String owner;
        private final String started;
        private final List<RankData> ranks;

        JobData(String jobId, String protocol, String owner, String started, List<RankData> ranks) {
            this.jobId = jobId;
            this.protocol = protocol;
            this.owner = owner;
            this.started = started;
            this.ranks = ranks;
        }

        public String getJobId() {
            return jobId;
        }

        public String getProtocol() {
            return protocol;
        }

        public String getOwner() {
            return owner;
        }

        public String getStarted() {
            return started;
        }

        public List<RankData> getRanks() {
            return ranks;
        }
    }

    /** A rank, as an open-type composite. */
    final class RankData {
        private final int rankId;
        private final int coreId;
        private final String program;
        private final long pid;
        private final String state;
        private final int exitStatus;
        private final long bytesIn;
        private final long bytesOut;

        RankData(int rankId, int coreId, String program, long pid, String state, int exitStatus, long bytesIn,
                 long bytesOut) {
            this.rankId = rankId;
            this.coreId = coreId;
            this.program = program;
            this.pid = pid;
            this.state = state;
            this.exitStatus = exitStatus;
            this.bytesIn = bytesIn;
            this.bytesOut = bytesOut;
        }

        public int getRankId() {
            return rankId;
        }

        public int getCoreId() {
            return coreId;
        }

        public String getProgram() {
            return program;
        }

        public long getPid() {
            return pid;
        }

        public String getState() {
            return state;
        }

        public int getExitStatus() {
            return exitStatus;
        }

        public long getBytesIn() {
            return bytesIn;
        }

        public long getBytesOut() {
            return bytesOut;
        }
    }
}
