package org.mpiproxy.cli;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

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
            launcher.get().destroy();
            try {
                launcher.get().onExit().get(wait.toSeconds(), TimeUnit.SECONDS);
                out.println("the launcher stopped the job" + endedByKill());
                return 0;
            } catch (java.util.concurrent.TimeoutException e) {
                launch.err().println("mpiproxy: launcher " + job.launcherPid() + " still runs after " + waitSeconds + " s");
                return 1;
            }
        }
        out.println("launcher " + job.launcherPid() + " is not running (it ended without recording the job's end,"
                + " e.g. killed): stopping the job itself");
        job.rankZero().ifPresent(p -> {
            out.println("stopping rank 0 (pid " + p.pid() + ")");
            p.destroyForcibly();
            try {
                p.onExit().get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                launch.err().println("mpiproxy: rank 0 did not stop: " + e);
            }
        });
        int[] statuses = new int[job.ranks().size() + 1];
        Arrays.fill(statuses, V1Control.NO_REPLY);
        statuses[0] = 0;
        if (job.v2()) {
            out.println("terminating job " + JobRunner.Job.hex(job.jobId()) + " over v2");
            try {
                V2Control.terminate(job.hostPort(), job.jobId(),
                        V2Control.keys(job.keySpec() != null ? job.keySpec() : V2Control.keySpec(null, launch.env())),
                        job.ranks(), statuses, true, wait, V2Control.DEAD_AFTER, () -> false, (r, stderr, line) -> { });
            } catch (IllegalArgumentException e) {
                launch.err().println("mpiproxy: " + e.getMessage());
                return 2;
            }
        } else {
            V1Control.terminate(job.hostPort(), job.ranks(), statuses, wait, () -> false);
        }
        int unknown = 0;
        for (int r = 1; r < statuses.length; r++) {
            out.println("rank " + r + " (" + job.ranks().get(r - 1) + ") " + V1Control.describe(statuses[r]));
            unknown += statuses[r] == V1Control.NO_REPLY ? 1 : 0;
        }
        return unknown == 0 ? 0 : 1;
    }
}
