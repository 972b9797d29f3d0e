package org.mpiproxy.shell.internal;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.mpiproxy.api.HealthResult;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.ProxyControl;
import org.mpiproxy.api.ProxyStatus;
import org.mpiproxy.api.RankInfo;

/** Hand-written stubs of the proxy's services and output capture for the command tests. */
final class Stubs {

    static final long JOB = 0x1a2bL;

    private Stubs() {
    }

    static JobInfo job() {
        return new JobInfo(JOB, "v1", "10.0.0.5:40001", Instant.EPOCH, List.of(
                new RankInfo(1, 0, "mpiping", 4242, RankInfo.State.RUNNING, -1, 120, 64, 8, 1),
                new RankInfo(2, 3, "mpiprime", 4243, RankInfo.State.EXITED, 7, 8, 16, 0, 0)));
    }

    static ProxyStatus status(List<JobInfo> jobs, Map<String, Long> counters) {
        return new ProxyStatus() {
            @Override
            public List<JobInfo> jobs() {
                return jobs;
            }

            @Override
            public Map<String, Long> counters() {
                return counters;
            }
        };
    }

    static ProxyStatus status(JobInfo... jobs) {
        return status(List.of(jobs), Map.of());
    }

    /** Records calls; answers from fields. */
    static final class Control implements ProxyControl {
        final List<String> calls = new ArrayList<>();
        List<Integer> signalled = List.of(1);
        Path output;
        JobInfo execResult = job();
        List<HealthResult> health = List.of();

        @Override
        public List<Integer> signal(long jobId, int rankId, String signal) {
            calls.add("signal " + Long.toHexString(jobId) + " " + rankId + " " + signal);
            return signalled;
        }

        @Override
        public Path outputFile(long jobId, int rankId, boolean stderr) {
            calls.add("output " + Long.toHexString(jobId) + " " + rankId + " " + stderr);
            return output;
        }

        @Override
        public JobInfo exec(String program, List<String> args, List<Integer> cores) {
            calls.add("exec " + program + " " + args + " " + cores);
            return execResult;
        }

        @Override
        public List<String> programs() {
            return List.of("mpiping", "mpiprime");
        }

        @Override
        public List<HealthResult> health() {
            return health;
        }
    }

    static Map<String, Long> counters(Object... keyValues) {
        Map<String, Long> m = new LinkedHashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            m.put((String) keyValues[i], ((Number) keyValues[i + 1]).longValue());
        }
        return m;
    }

    /** Runs the command with System.out captured; returns what it printed. */
    static String run(MpiCommandSupport command) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream original = System.out;
        System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            command.execute();
        } finally {
            System.setOut(original);
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }
}
