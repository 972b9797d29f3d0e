package org.mpiproxy.shell.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.apache.karaf.shell.api.action.Action;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.ProxyControl;
import org.mpiproxy.api.ProxyStatus;
import org.mpiproxy.api.RankInfo;

/** Base of the {@code mpi:*} commands: looks up the proxy's services and resolves job and rank ids. */
public abstract class MpiCommandSupport implements Action {

    @Reference
    private ProxyStatus proxyStatus;

    @Reference(optional = true)
    private ProxyControl proxyControl;

    /**
     * Sets the status service; the shell injects it, tests call this.
     *
     * @param proxyStatus the proxy's status
     */
    public void setProxyStatus(ProxyStatus proxyStatus) {
        this.proxyStatus = proxyStatus;
    }

    /**
     * Sets the control service; the shell injects it, tests call this.
     *
     * @param proxyControl the proxy's operator actions
     */
    public void setProxyControl(ProxyControl proxyControl) {
        this.proxyControl = proxyControl;
    }

    @Override
    public Object execute() throws Exception {
        if (proxyStatus == null) {
            throw new IllegalStateException("the MPI proxy is not running");
        }
        return doExecute(proxyStatus);
    }

    /** @return the control service; fails readably when the proxy does not offer it */
    protected ProxyControl control() {
        if (proxyControl == null) {
            throw new IllegalStateException("the MPI proxy's control service is not running");
        }
        return proxyControl;
    }

    /**
     * Runs the command.
     *
     * @param status the proxy's status
     * @return the command's result, usually {@code null}
     * @throws Exception when the command fails
     */
    protected abstract Object doExecute(ProxyStatus status) throws Exception;

    /** @return the id as the commands print it: 16 lower-case hex digits */
    static String hex(long jobId) {
        return String.format("%016x", jobId);
    }

    /**
     * Finds a job by its id (leading zeros optional) or a unique prefix of the 16 digits
     * {@code mpi:jobs} prints.
     *
     * @throws IllegalArgumentException when no job or several jobs match
     */
    static JobInfo resolveJob(ProxyStatus status, String id) {
        String text = id == null ? "" : id.trim().toLowerCase(Locale.ROOT);
        if (text.isEmpty() || !text.matches("[0-9a-f]{1,16}")) {
            throw new IllegalArgumentException("job id '" + id + "' is not hexadecimal (see mpi:jobs)");
        }
        long value = Long.parseUnsignedLong(text, 16);
        List<JobInfo> matches = new ArrayList<>();
        for (JobInfo job : status.jobs()) {
            if (job.jobId() == value) {
                return job;
            }
        }
        for (JobInfo job : status.jobs()) {
            String h = hex(job.jobId());
            if (h.equals(text) || (text.length() < 16 && h.startsWith(text))) {
                matches.add(job);
            }
        }
        if (matches.isEmpty()) {
            throw new IllegalArgumentException("no job " + id + " (see mpi:jobs)");
        }
        if (matches.size() > 1) {
            List<String> ids = new ArrayList<>();
            matches.forEach(j -> ids.add(hex(j.jobId())));
            throw new IllegalArgumentException("job id '" + id + "' matches " + String.join(", ", ids));
        }
        return matches.get(0);
    }

    /** @throws IllegalArgumentException when the job has no such rank */
    static RankInfo resolveRank(JobInfo job, int rankId) {
        for (RankInfo r : job.ranks()) {
            if (r.rankId() == rankId) {
                return r;
            }
        }
        throw new IllegalArgumentException("job " + hex(job.jobId()) + " has no rank " + rankId);
    }
}
