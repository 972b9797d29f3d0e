package org.mpiproxy.proxy.internal;

import java.util.List;

/**
 * One job over JMX as {@code org.mpiproxy:type=Job,id=<16 hex>}, registered while the job runs
 * (see {@link JobMBeans}). The per-rank arrays are in the order of {@link #getRankIds()}.
 * Attributes are read live from the proxy; every one is an open type.
 */
public interface JobMXBean {

    /** Object name prefix of the job MBeans; the job id (16 hex digits) follows. */
    String OBJECT_NAME_PREFIX = "org.mpiproxy:type=Job,id=";

    /** @return the job id, 16 hex digits */
    String getJobId();

    /** @return {@code v1} or {@code v2} */
    String getProtocol();

    /** @return the host that owns the job, {@code address:port} */
    String getOwner();

    /** @return when the job was created (ISO-8601) */
    String getStarted();

    /** @return the rank ids on this node */
    int[] getRankIds();

    /** @return each rank's state: RUNNING, TERMINATING, EXITED or FAILED */
    String[] getStates();

    /** @return each rank's exit status (code, or 128 + signal), -1 while it runs */
    int[] getExitStatuses();

    /** @return each rank's process id, -1 when it never started */
    long[] getPids();

    /** @return payload bytes delivered to the job's ranks */
    long getBytesIn();

    /** @return payload bytes taken from the job's ranks */
    long getBytesOut();

    /** @return the ranks with all their fields */
    List<ProxyMXBean.RankData> getRanks();
}
