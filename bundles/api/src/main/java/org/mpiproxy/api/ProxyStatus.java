package org.mpiproxy.api;

import java.util.List;
import java.util.Map;

import org.osgi.annotation.versioning.ProviderType;

/**
 * Read-only view of the proxy for operators (shell commands, JMX). Thread-safe.
 */
@ProviderType
public interface ProxyStatus {

    /** @return a snapshot of every job, ordered by job id */
    List<JobInfo> jobs();

    /** @return counters by name (datagrams in, invalid datagrams, ...), a snapshot */
    Map<String, Long> counters();
}
