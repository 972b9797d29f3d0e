package org.mpiproxy.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.mpiproxy.protocol.ClusterKeys;

/**
 * How a job of {@link JobRunner} ended: the ranks' exit statuses rank 0 wrote, the nodes that
 * did not answer, one line for every rank that did not end well, the launcher's exit status and
 * the job file's end. Used from the launcher's main thread only.
 */
final class JobEnd {

    private final Path jobFile;
    private final PrintStream err;
    /** Why a rank's node did not answer the probe, by rank (status {@link V1Control#NODE_DOWN}). */
    private final Map<Integer, String> nodeProblems = new HashMap<>();

    /**
     * @param jobFile where the job is described, or {@code null}
     * @param err     where problems go
     */
    JobEnd(Path jobFile, PrintStream err) {
        this.jobFile = jobFile;
        this.err = err;
    }

    /** Keeps why rank {@code rank}'s node could not start it, for the report. */
    void nodeProblem(int rank, String reason) {
        nodeProblems.put(rank, reason);
    }

    /**
     * Rewrites the job file, when there is one, with the job's end; a file that cannot be written
     * is reported and changes nothing else.
     */
    void record(JobFile job, int[] statuses, int exit, String stopReason) {
        if (jobFile == null) {
            return;
        }
        List<Integer> ranks = new ArrayList<>();
        for (int s : statuses) {
            ranks.add(s);
        }
        try {
            job.ended(new JobFile.End(Instant.now(), exit, stopReason, List.copyOf(ranks)))
                    .write(jobFile);
        } catch (IOException e) {
            err.println("mpiproxy: cannot record the job's end in " + jobFile + ": " + e);
        }
    }

    /**
     * Gives up the ranks of the node the job lost: not asked to terminate, reported with why.
     *
     * @param lost     the node, or {@code null} when none was lost
     * @param statuses the ranks' statuses; the lost node's unknown ones become {@link V1Control#NODE_DOWN}
     */
    void lostNode(NodeWatch.Lost lost, int[] statuses) {
        if (lost == null) {
            return;
        }
        for (int r : lost.ranks()) {
            if (r < statuses.length && statuses[r] < 0) {
                statuses[r] = V1Control.NODE_DOWN;
                nodeProblems.put(r, lost.reason());
            }
        }
    }

    /**
     * A node that does not answer a probe is not waited for (a launch may have failed on it);
     * why it did not answer is kept for the report. Ranks already given up are not probed again.
     */
    void markUnreachableNodes(List<Placement> ranks, int[] statuses, ClusterKeys keys, V2Credential credential)
            throws IOException {
        Map<InetSocketAddress, Boolean> probes = new LinkedHashMap<>();
        for (int r = 1; r < statuses.length; r++) {
            if (statuses[r] < 0 && statuses[r] != V1Control.NODE_DOWN) {
                probes.put(new InetSocketAddress(ranks.get(r - 1).address(), ranks.get(r - 1).port()), false);
            }
        }
        Map<InetSocketAddress, Prober.Answer> answers = keys != null
                ? V2Control.probe(List.copyOf(probes.keySet()), keys, credential, Duration.ofSeconds(2))
                : V1Control.probe(List.copyOf(probes.keySet()), Duration.ofSeconds(2));
        for (int r = 1; r < statuses.length; r++) {
            InetSocketAddress proxy = new InetSocketAddress(ranks.get(r - 1).address(), ranks.get(r - 1).port());
            Prober.Answer a = answers.getOrDefault(proxy, Prober.Answer.ANSWERED);
            if (statuses[r] < 0 && statuses[r] != V1Control.NODE_DOWN && !a.answered()) {
                statuses[r] = V1Control.NODE_DOWN;
                nodeProblems.put(r, a.problem());
            }
        }
    }

    /**
     * Says what became of every rank that did not end well.
     *
     * @param fence   the job's PMI fence, or null
     * @param session the launcher's side of a v2 job, or null
     * @return the launcher's exit status
     */
    int report(int[] statuses, List<Placement> ranks, String stopReason, PmiFence fence, V2Session session) {
        int exit = 0;
        boolean unknown = false;
        for (int r = 0; r < statuses.length; r++) {
            int s = statuses[r];
            if (s == 0 || s == V1Control.NOT_RUNNING) {
                continue;
            }
            String where = r == 0 ? "here" : ranks.get(r - 1).toString();
            String problem = nodeProblems.get(r);
            err.println("mpiproxy: rank " + r + " (" + where + ") " + (problem == null ? V1Control.describe(s)
                    : s == V1Control.NODE_DOWN ? "unknown: " + problem : V1Control.describe(s) + ": " + problem));
            if (s > 0 && exit == 0) {
                exit = (s & 0xff) == 0 ? 1 : s & 0xff;
            }
            unknown |= s < 0;
        }
        if (JobRunner.ABORT.equals(stopReason)) {
            int code = fence.abort().exitCode();
            return (code & 0xff) == 0 ? 1 : code & 0xff;
        }
        if (JobRunner.FAILURE.equals(stopReason) && session != null && session.failedRank() > 0) {
            int s = statuses[session.failedRank()];
            return s > 0 ? ((s & 0xff) == 0 ? 1 : s & 0xff) : 1;
        }
        if (JobRunner.NODE_LOST.equals(stopReason)) {
            return JobRunner.EXIT_NODE_LOST;
        }
        if (stopReason != null) {
            return stopReason.equals("SIGINT") ? 130 : stopReason.equals("SIGTERM") ? 143 : JobRunner.EXIT_TIMEOUT;
        }
        return exit != 0 ? exit : unknown ? 1 : 0;
    }

    /** @return whether a rank's end is not known */
    static boolean hasUnknown(int[] statuses) {
        for (int r = 1; r < statuses.length; r++) {
            if (statuses[r] < 0) {
                return true;
            }
        }
        return false;
    }

    /** @return whether rank 0 wrote the file (it finalized); fills the statuses it names */
    static boolean readStatuses(Path file, int[] statuses) throws IOException {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return false;
        }
        for (String line : lines) {
            String[] f = line.strip().split(" ");
            if (f.length != 2) {
                continue;
            }
            try {
                int r = Integer.parseInt(f[0]);
                int s = Integer.parseInt(f[1]);
                if (r >= 1 && r < statuses.length) {
                    statuses[r] = s < 0 ? V1Control.NO_REPLY : s;
                }
            } catch (NumberFormatException e) {
                // not a status line: the file is rank 0's, written by our library only
            }
        }
        return true;
    }
}
