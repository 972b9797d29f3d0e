package org.mpiproxy.shell.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.ProxyStatus;
import org.mpiproxy.api.RankInfo;

class ListJobsCommandTest {

    private static ProxyStatus status(List<JobInfo> jobs) {
        return new ProxyStatus() {
            @Override
            public List<JobInfo> jobs() {
                return jobs;
            }

            @Override
            public Map<String, Long> counters() {
                return Map.of();
            }
        };
    }

    private static String run(ListJobsCommand command) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream original = System.out;
        System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            assertNull(command.execute());
        } finally {
            System.setOut(original);
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    private static JobInfo job() {
        return new JobInfo(0x1a2bL, "v1", "10.0.0.5:40001", Instant.EPOCH, List.of(
                new RankInfo(1, 0, "mpiping", 4242, RankInfo.State.RUNNING, -1, 120, 64, 0, 0),
                new RankInfo(2, 3, "mpiprime", -1, RankInfo.State.EXITED, 7, 8, 16, 0, 0)));
    }

    @Test
    void shouldPrintNoJobsWhenEmpty() throws Exception {
        ListJobsCommand command = new ListJobsCommand();
        command.setProxyStatus(status(List.of()));
        assertEquals("No jobs.", run(command).trim());
    }

    @Test
    void shouldPrintOneRowPerRankWithoutFormat() throws Exception {
        ListJobsCommand command = new ListJobsCommand();
        command.setProxyStatus(status(List.of(job())));
        command.noFormat = true;
        String[] lines = run(command).split("\\R");
        assertEquals(2, lines.length, "no header without format: " + String.join("\n", lines));
        assertEquals(List.of("0000000000001a2b", "v1", "10.0.0.5:40001", "1", "0", "mpiping", "4242", "RUNNING", "-",
                "120", "64"), fields(lines[0]));
        assertEquals(List.of("0000000000001a2b", "v1", "10.0.0.5:40001", "2", "3", "mpiprime", "-", "EXITED", "7",
                "8", "16"), fields(lines[1]));
    }

    private static JobInfo finished(long id, String program) {
        return new JobInfo(id, "v2", "10.0.0.5:40002", Instant.EPOCH, List.of(
                new RankInfo(1, 0, program, 77, RankInfo.State.EXITED, 0, 0, 0, 0, 0),
                new RankInfo(2, 1, program, -1, RankInfo.State.FAILED, -1, 0, 0, 0, 0)));
    }

    @Test
    void shouldListRunningJobsUnlessAllAreAskedFor() throws Exception {
        String staged = "sha256-" + "0123456789abcdef".repeat(4) + ".lz4";
        List<JobInfo> jobs = List.of(job(), finished(0x3c4dL, staged), finished(0x5e6fL, "hello"));
        ListJobsCommand command = new ListJobsCommand();
        command.setProxyStatus(status(jobs));
        command.noFormat = true;
        String running = run(command);
        assertEquals(2, running.split("\\R").length, running);
        assertTrue(running.contains("0000000000001a2b") && !running.contains("3c4d") && !running.contains("5e6f"),
                running);

        command.all = true;
        String[] all = run(command).split("\\R");
        assertEquals(6, all.length, String.join("\n", all));
        assertEquals("sha256-0123456789ab….lz4", fields(all[2]).get(5), "a staged program by its digest's start");

        command.all = false;
        command.noFormat = false;
        assertTrue(run(command).contains("2 finished jobs not shown: mpi:jobs --all"));
        command.setProxyStatus(status(List.of(finished(0x5e6fL, "hello"))));
        assertEquals("No running jobs (1 finished: mpi:jobs --all).", run(command).trim());
    }

    private static List<String> fields(String line) {
        return Arrays.stream(line.split("\t")).map(String::trim).collect(Collectors.toList());
    }

    @Test
    void shouldPrintTableWithHeaders() throws Exception {
        ListJobsCommand command = new ListJobsCommand();
        command.setProxyStatus(status(List.of(job())));
        String out = run(command);
        assertTrue(out.contains("Job"), out);
        assertTrue(out.contains("Exit"), out);
        assertTrue(out.contains("Program"), out);
        assertTrue(out.contains("mpiprime"), out);
        assertTrue(out.contains("0000000000001a2b"), out);
    }

    @Test
    void shouldFailReadablyWithoutProxy() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> new ListJobsCommand().execute());
        assertTrue(e.getMessage().contains("not running"));
    }
}
