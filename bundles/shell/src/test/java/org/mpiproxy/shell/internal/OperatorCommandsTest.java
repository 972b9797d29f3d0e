package org.mpiproxy.shell.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.HealthResult;
import org.mpiproxy.api.JobInfo;

class OperatorCommandsTest {

    @TempDir
    Path dir;

    private static List<String> fields(String line) {
        return Arrays.stream(line.split("\t")).map(String::trim).collect(Collectors.toList());
    }

    private static <T extends MpiCommandSupport> T wire(T command, Stubs.Control control, JobInfo... jobs) {
        command.setProxyStatus(Stubs.status(jobs));
        command.setProxyControl(control);
        return command;
    }

    @Test
    void shouldShowEveryRankOfAJobFoundByPrefix() throws Exception {
        ShowJobCommand command = wire(new ShowJobCommand(), new Stubs.Control(), Stubs.job());
        command.job = "00000000000";
        command.noFormat = true;
        String[] lines = Stubs.run(command).split("\\R");
        assertEquals(2, lines.length, String.join("\n", lines));
        assertEquals(List.of("1", "0", "mpiping", "4242", "RUNNING", "-", "120", "64", "8", "1", "-", "-"),
                fields(lines[0]));
        assertEquals(List.of("2", "3", "mpiprime", "4243", "EXITED", "7", "8", "16", "0", "0", "-", "-"),
                fields(lines[1]));
    }

    @Test
    void shouldPrintJobHeaderAndColumnsWhenFormatted() throws Exception {
        ShowJobCommand command = wire(new ShowJobCommand(), new Stubs.Control(), Stubs.job());
        command.job = "0000000000001a2b";
        String out = Stubs.run(command);
        assertTrue(out.startsWith("Job 0000000000001a2b (v1) of 10.0.0.5:40001"), out);
        assertTrue(out.contains("Ring in") && out.contains("Dropped"), out);
    }

    @Test
    void shouldRefuseUnknownOrMalformedJobIdsReadably() {
        ShowJobCommand command = wire(new ShowJobCommand(), new Stubs.Control(), Stubs.job());
        command.job = "ffff";
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, command::execute);
        assertEquals("no job ffff (see mpi:jobs)", e.getMessage());
        command.job = "xyz";
        e = assertThrows(IllegalArgumentException.class, command::execute);
        assertTrue(e.getMessage().contains("not hexadecimal"), e.getMessage());
    }

    @Test
    void shouldRefuseAnAmbiguousPrefix() {
        JobInfo other = new JobInfo(0x1a3cL, "v1", "h:1", Stubs.job().started(), List.of());
        ShowJobCommand command = wire(new ShowJobCommand(), new Stubs.Control(), Stubs.job(), other);
        command.job = "000000000000";
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, command::execute);
        assertTrue(e.getMessage().contains("0000000000001a2b") && e.getMessage().contains("0000000000001a3c"),
                e.getMessage());
    }

    @Test
    void shouldSignalOneRankWithTheChosenSignal() throws Exception {
        Stubs.Control control = new Stubs.Control();
        StopCommand command = wire(new StopCommand(), control, Stubs.job());
        command.job = "1a2b";
        command.rank = 1;
        command.signal = "kill";
        String out = Stubs.run(command);
        assertEquals(List.of("signal 1a2b 1 kill"), control.calls);
        assertEquals("Job 0000000000001a2b: sent SIGKILL to rank 1.", out.trim());
    }

    @Test
    void shouldSignalEveryRankByDefaultWithTerm() throws Exception {
        Stubs.Control control = new Stubs.Control();
        control.signalled = List.of(1, 2);
        StopCommand command = wire(new StopCommand(), control, Stubs.job());
        command.job = "1a2b";
        String out = Stubs.run(command);
        assertEquals(List.of("signal 1a2b 0 TERM"), control.calls);
        assertEquals("Job 0000000000001a2b: sent SIGTERM to ranks 1, 2.", out.trim());
    }

    @Test
    void shouldSayWhenNoRankWasRunning() throws Exception {
        Stubs.Control control = new Stubs.Control();
        control.signalled = List.of();
        StopCommand command = wire(new StopCommand(), control, Stubs.job());
        command.job = "1a2b";
        command.rank = 2;
        assertEquals("Job 0000000000001a2b: no running rank 2 to signal.", Stubs.run(command).trim());
    }

    @Test
    void shouldRefuseToStopAnUnknownRank() {
        Stubs.Control control = new Stubs.Control();
        StopCommand command = wire(new StopCommand(), control, Stubs.job());
        command.job = "1a2b";
        command.rank = 9;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, command::execute);
        assertEquals("job 0000000000001a2b has no rank 9", e.getMessage());
        assertTrue(control.calls.isEmpty());
    }

    @Test
    void shouldPrintWholeOutputOrItsLastLines() throws Exception {
        Path file = dir.resolve("rank-1.out");
        Files.writeString(file, "one\ntwo\nthree\n", StandardCharsets.UTF_8);
        Stubs.Control control = new Stubs.Control();
        control.output = file;
        ShowOutputCommand command = wire(new ShowOutputCommand(), control, Stubs.job());
        command.job = "1a2b";
        command.rank = 2;
        assertEquals("one\ntwo\nthree\n", Stubs.run(command));
        command.lines = 2;
        assertEquals("two\nthree\n", Stubs.run(command));
        command.stderr = true;
        command.lines = 5;
        assertEquals("one\ntwo\nthree\n", Stubs.run(command));
        assertEquals("output 1a2b 2 true", control.calls.get(2));
    }

    @Test
    void shouldFollowOutputUntilTheRankEnds() throws Exception {
        Path file = dir.resolve("rank-1.out");
        Files.writeString(file, "first\n", StandardCharsets.UTF_8);
        ShowOutputCommand command = new ShowOutputCommand();
        command.follow = true;
        int[] polls = {0};
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        command.print(file, new java.io.PrintStream(bytes, true, StandardCharsets.UTF_8), () -> {
            if (polls[0]++ == 1) {
                try {
                    Files.writeString(file, "second\n", StandardCharsets.UTF_8,
                            java.nio.file.StandardOpenOption.APPEND);
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
                return false;
            }
            return true;
        });
        assertEquals("first\nsecond\n", bytes.toString(StandardCharsets.UTF_8));
    }

    @Test
    void shouldSayWhenThereIsNoOutputFile() {
        Stubs.Control control = new Stubs.Control();
        control.output = dir.resolve("missing.out");
        ShowOutputCommand command = wire(new ShowOutputCommand(), control, Stubs.job());
        command.job = "1a2b";
        command.rank = 1;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, command::execute);
        assertTrue(e.getMessage().startsWith("no output file"), e.getMessage());
    }

    @Test
    void shouldExecWithOneRankPerCore() throws Exception {
        Stubs.Control control = new Stubs.Control();
        ExecJobCommand command = wire(new ExecJobCommand(), control);
        command.program = "mpiprime";
        command.args = List.of("1000");
        command.cores = "0,1";
        command.noFormat = true;
        String out = Stubs.run(command);
        assertEquals(List.of("exec mpiprime [1000] [0, 1]"), control.calls);
        String[] lines = out.split("\\R");
        assertEquals("Job 0000000000001a2b started (host 10.0.0.5:40001)", lines[0]);
        assertEquals(List.of("1", "0", "mpiping", "4242", "RUNNING"), fields(lines[1]));
    }

    @Test
    void shouldSpreadRanksOverCores() {
        assertEquals(List.of(0), ExecJobCommand.cores(0, null));
        assertEquals(List.of(0, 0, 0), ExecJobCommand.cores(3, null));
        assertEquals(List.of(2, 2), ExecJobCommand.cores(2, "2"));
        assertEquals(List.of(0, 1), ExecJobCommand.cores(2, "0, 1"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ExecJobCommand.cores(3, "0,1"));
        assertEquals("--ranks 3 but --cores names 2 cores", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> ExecJobCommand.cores(0, "0,x"));
        assertEquals("--cores 0,x: 'x' is not a core number", e.getMessage());
    }

    @Test
    void shouldListNonZeroCountersUnlessAll() throws Exception {
        ListCountersCommand command = new ListCountersCommand();
        command.setProxyStatus(Stubs.status(List.of(), Stubs.counters("datagrams.in", 5, "invalid.op", 0,
                "invalid.short", 2)));
        command.noFormat = true;
        assertEquals(List.of("datagrams.in\t5", "invalid.short\t2"), trimmed(Stubs.run(command)));
        command.all = true;
        command.prefix = "invalid.";
        assertEquals(List.of("invalid.op\t0", "invalid.short\t2"), trimmed(Stubs.run(command)));
    }

    private static List<String> trimmed(String out) {
        return Arrays.stream(out.split("\\R")).map(l -> String.join("\t", fields(l))).collect(Collectors.toList());
    }

    @Test
    void shouldPrintEachHealthCheckAndTheWorstStatus() throws Exception {
        Stubs.Control control = new Stubs.Control();
        control.health = List.of(new HealthResult("udp.listening", HealthResult.Status.OK, "listening on x"),
                new HealthResult("programs.local", HealthResult.Status.CRITICAL, "/nope is not a directory"));
        HealthCommand command = wire(new HealthCommand(), control);
        command.noFormat = true;
        List<String> lines = trimmed(Stubs.run(command));
        assertEquals(List.of("udp.listening\tOK\tlistening on x", "programs.local\tCRITICAL\t/nope is not a directory",
                "Health: CRITICAL"), lines);
    }

    @Test
    void shouldFailReadablyWithoutControlService() {
        HealthCommand command = new HealthCommand();
        command.setProxyStatus(Stubs.status());
        IllegalStateException e = assertThrows(IllegalStateException.class, command::execute);
        assertTrue(e.getMessage().contains("control service is not running"), e.getMessage());
    }
}
