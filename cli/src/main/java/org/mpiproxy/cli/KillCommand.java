package org.mpiproxy.cli;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.Callable;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code mpiproxy kill}: stops a job everywhere, through its launcher when it still runs. */
@Command(name = "kill", sortOptions = false, mixinStandardHelpOptions = true,
        description = {"Stops the job a job file describes: sends SIGTERM to its launcher, which stops rank 0 and the"
                + " ranks on every node; when the launcher is gone, stops rank 0 and terminates the ranks itself"
                + " (only the job's owner port can, which this command takes over; over v2 by the job's id, signed"
                + " with the job's key).",
            "Over v2 the proxies stop the ranks at once: SIGTERM, SIGKILL after their stop.grace.seconds. v1 has no"
                + " such request: its proxies first wait their terminate.timeout.seconds for the ranks to exit.",
            "A job that already ended (its file records the end) is not stopped again: the command says when it"
                + " ended and with which exit status, contacts nobody, and exits 0.",
            "Exit status: 0 when the job is gone everywhere, 1 when some rank's state is unknown, 2 for bad usage."})
final class KillCommand implements Callable<Integer> {

    @Option(names = "--job-file", paramLabel = "FILE", required = true,
            description = "The job file written by 'mpiproxy run --job-file'.")
    Path jobFile;

    @Option(names = "--wait", paramLabel = "SECONDS", defaultValue = "90",
            description = "How long to wait for the job to end (default: ${DEFAULT-VALUE}).")
    long waitSeconds;

    private final RunCommand.Launch launch;

    KillCommand(RunCommand.Launch launch) {
        this.launch = launch;
    }

    /**
     * After the launcher ended on this command's SIGTERM: records in the job file that the job was
     * stopped by {@code mpiproxy kill} (the launcher wrote SIGTERM) and returns how it ended, in words.
     */
    private String endedByKill() {
        try {
            JobFile job = JobFile.read(jobFile);
            if (job.end() == null) {
                return " (it did not record the job's end)";
            }
            if ("SIGTERM".equals(job.end().stopReason())) {
                JobFile.End end = job.end();
                job = job.ended(new JobFile.End(end.at(), end.exitStatus(), "kill", end.rankStatuses()));
                job.write(jobFile);
            }
            return ": it ended " + job.endText();
        } catch (IllegalArgumentException | java.io.IOException e) {
            return " (" + e.getMessage() + ")";
        }
    }

    @Override
    public Integer call() throws Exception {
        PrintStream out = launch.out();
        JobFile job;
        try {
            job = JobFile.read(jobFile);
        } catch (IllegalArgumentException | java.io.IOException e) {
            launch.err().println("mpiproxy: " + e.getMessage());
            return 2;
        }
        if (job.end() != null) {
            out.println("mpiproxy: job " + job.name(jobFile) + " already ended " + job.endText()
                    + "; nothing to stop");
            return 0;
        }
        Duration wait = Duration.ofSeconds(waitSeconds);
        Optional<ProcessHandle> launcher = JobFile.process(job.launcherPid(), job.launcherStarted());
        if (launcher.isPresent()) {
            out.println("stopping launcher " + job.launcherPid());
            if (!launcher.get().destroy() && launcher.get().isAlive()) {
                // kill(2) refused: the launcher, so the job, is another user's
                launch.err().println("mpiproxy: not allowed to stop launcher " + job.launcherPid() + " (user "
                        + launcher.get().info().user().orElse("?") + "): the job is not yours");
                return 1;
            }
            if (awaitGone(launcher.get(), wait)) {
                out.println("the launcher stopped the job" + endedByKill());
                return 0;
            }
            launch.err().println("mpiproxy: launcher " + job.launcherPid() + " still runs after " + waitSeconds + " s");
            return 1;
        }
        out.println("launcher " + job.launcherPid() + " is not running (it ended without recording the job's end,"
                + " e.g. killed): stopping the job itself");
        Optional<ProcessHandle> rankZero = job.rankZero();
        rankZero.ifPresent(p -> {
            out.println("stopping rank 0 (pid " + p.pid() + ")");
            p.destroyForcibly();
        });
        // rank 0 holds the job's owner port until it is gone: take the port over as soon as it is free
        String taken = awaitPortFree(job.hostPort(), rankZero.isPresent() ? PORT_WAIT : Duration.ZERO);
        if (taken != null) {
            launch.err().println("mpiproxy: cannot take over the job's port " + job.hostPort() + " to stop its ranks ("
                    + taken + "): another process holds it; the ranks on the nodes still run");
            return 1;
        }
        int[] statuses = new int[job.ranks().size() + 1];
        Arrays.fill(statuses, V1Control.NO_REPLY);
        statuses[0] = rankZero.isPresent() ? 128 + 9 : V1Control.NO_REPLY;
        try {
            if (job.v2()) {
                out.println("terminating job " + JobRunner.Job.hex(job.jobId()) + " over v2");
                // without the cluster key: the job's own key, from the local proxy (docs/protocol-v2.md 4.2)
                LauncherIdentity identity = LauncherIdentity.forJob(job.keySpec(), null, launch.env(), job.jobId(),
                        job.ranks().isEmpty() ? null : job.ranks().get(0));
                String refused = identity.credential() == null ? null : identity.credential().presentTo(
                        job.ranks().stream().map(p -> new java.net.InetSocketAddress(p.address(), p.port())).toList(),
                        wait);
                if (refused != null) {
                    launch.err().println("mpiproxy: " + refused);
                    return 1;
                }
                V2Control.terminate(job.hostPort(), job.jobId(), identity.keys(), identity.credential(), job.ranks(),
                        statuses, true, wait, V2Control.DEAD_AFTER, () -> false, (r, stderr, line) -> { },
                        System::nanoTime);
            } else {
                V1Control.terminate(job.hostPort(), job.ranks(), statuses, wait, () -> false);
            }
        } catch (IllegalArgumentException e) {
            launch.err().println("mpiproxy: " + e.getMessage());
            return 2;
        } catch (java.io.IOException e) {
            launch.err().println("mpiproxy: cannot stop the ranks from the job's port " + job.hostPort() + ": " + e.getMessage());
            return 1;
        }
        recordEnd(job, statuses);
        int unknown = 0;
        for (int r = 1; r < statuses.length; r++) {
            out.println("rank " + r + " (" + job.ranks().get(r - 1) + ") " + V1Control.describe(statuses[r]));
            unknown += statuses[r] == V1Control.NO_REPLY ? 1 : 0;
        }
        return unknown == 0 ? 0 : 1;
    }
    /** How long rank 0 may take to die and free the job's port after SIGKILL. */
    private static final Duration PORT_WAIT = Duration.ofSeconds(10);
    private static final long PORT_POLL_MILLIS = 5;

    /**
     * Waits until a UDP socket can be bound to {@code port}: polls, so the port is taken over the
     * moment rank 0's socket closes rather than when a wait for the process's exit notices it.
     *
     * @return {@code null} when the port is free, else why it could not be bound at the end of {@code max}
     */
    private static String awaitPortFree(int port, Duration max) {
        long deadline = System.nanoTime() + max.toNanos();
        while (true) {
            try (java.nio.channels.DatagramChannel probe = java.nio.channels.DatagramChannel.open()) {
                probe.bind(new java.net.InetSocketAddress(port));
                return null;
            } catch (java.io.IOException e) {
                if (System.nanoTime() - deadline >= 0) {
                    return String.valueOf(e.getMessage());
                }
            }
            try {
                Thread.sleep(PORT_POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "interrupted";
            }
        }
    }

    /**
     * Waits for a process that is not this one's child to end. Polls: the JDK's wait for such a
     * process sleeps 300 ms and more between looks, which would add that to every stop.
     *
     * @return whether it ended within {@code max}
     */
    private static boolean awaitGone(ProcessHandle process, Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        while (process.isAlive()) {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            Thread.sleep(PORT_POLL_MILLIS);
        }
        return true;
    }

    /** Records in the job file that this command stopped the job after its launcher had died. */
    private void recordEnd(JobFile job, int[] statuses) {
        java.util.List<Integer> ranks = new java.util.ArrayList<>();
        for (int s : statuses) {
            ranks.add(s);
        }
        try {
            job.ended(new JobFile.End(java.time.Instant.now(), JobFile.LAUNCHER_GONE, "kill", java.util.List.copyOf(ranks)))
                    .write(jobFile);
        } catch (java.io.IOException e) {
            launch.err().println("mpiproxy: cannot record the job's end in " + jobFile + ": " + e.getMessage());
        }
    }
}
