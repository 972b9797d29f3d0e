package org.mpiproxy.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.mpiproxy.api.LaunchRequest;

class RankCommandTest {

    private static LaunchRequest request(long jobId, List<String> args, Map<String, String> env) {
        return new LaunchRequest(jobId, 3, 5, 1, "ring", args, Path.of("shm", "job", "rank-3.chan"), env,
                Path.of("logs"));
    }

    @Test
    void shouldBuildSlaveCommandLineWithProgramArgumentsLast() {
        List<String> argv = RankCommand.argv("/opt/programs/ring",
                request(1, List.of("-n", "10", "a b"), Map.of()));

        assertEquals(List.of("/opt/programs/ring", "--slave", Path.of("shm", "job", "rank-3.chan").toString(),
                "3", "5", "-n", "10", "a b"), argv);
        assertThrows(UnsupportedOperationException.class, () -> argv.add("x"));
    }

    @Test
    void shouldRunAPlainRequestAsGivenWithTheWorldInTheEnvironment() {
        LaunchRequest plain = new LaunchRequest(1, 3, 5, 0, "hostname", List.of("-s", "a b"),
                Path.of("shm", "job", "rank-3.chan"), Map.of("PMI_RANK", "7", "OMPI_COMM_WORLD_LOCAL_RANK", "1"),
                Path.of("logs"), true);

        assertEquals(List.of("/usr/bin/hostname", "-s", "a b"), RankCommand.argv("/usr/bin/hostname", plain));
        Map<String, String> env = RankCommand.environment(plain, null);
        assertEquals("3", env.get("PMI_RANK"), "the proxy's rank wins over the request's");
        assertEquals("1", env.get("OMPI_COMM_WORLD_LOCAL_RANK"), "what only the launcher knows stays");
        assertEquals("5", env.get("MPIPROXY_SIZE"));
    }

    @Test
    void shouldBuildCommandLineWithoutProgramArguments() {
        assertEquals(5, RankCommand.argv("p", request(1, List.of(), Map.of())).size());
    }

    @Test
    void shouldSetRankVariablesAndJavaHome() throws Exception {
        Map<String, String> env = RankCommand.environment(request(0xabcL, List.of(), Map.of("EXTRA", "1")),
                "/usr/lib/jvm/java-17");

        assertEquals(Long.toString(ProcessHandle.current().pid()), env.get("MPIPROXY_PROXY_PID"));
        assertEquals(Long.toString(ProcStat.read(ProcessHandle.current().pid()).orElseThrow().startTime()),
                env.get("MPIPROXY_PROXY_START"), "the proxy's lifeline: its pid and start time");
        env = new java.util.HashMap<>(env);
        env.remove("MPIPROXY_PROXY_PID");
        env.remove("MPIPROXY_PROXY_START");
        assertEquals(Map.ofEntries(
                Map.entry("EXTRA", "1"),
                Map.entry("JAVA_HOME", "/usr/lib/jvm/java-17"),
                Map.entry("MPIPROXY_CHANNEL", Path.of("shm", "job", "rank-3.chan").toString()),
                Map.entry("MPIPROXY_RANK", "3"),
                Map.entry("MPIPROXY_WORLD_SIZE", "5"),
                Map.entry("MPIPROXY_SIZE", "5"),
                Map.entry("PMI_RANK", "3"),
                Map.entry("PMI_SIZE", "5"),
                Map.entry("OMPI_COMM_WORLD_RANK", "3"),
                Map.entry("OMPI_COMM_WORLD_SIZE", "5"),
                Map.entry("MPIPROXY_JOB_ID", "0000000000000abc"),
                Map.entry("MPIPROXY_CORE", "1"),
                Map.entry("MPIPROXY_PROGRAM", "ring")), env);
    }

    @Test
    void shouldNotLetRequestOverrideRankVariables() {
        Map<String, String> env = RankCommand.environment(
                request(1, List.of(), Map.of("MPIPROXY_CHANNEL", "/elsewhere", "MPIPROXY_RANK", "9")), "/jdk");

        assertEquals(Path.of("shm", "job", "rank-3.chan").toString(), env.get("MPIPROXY_CHANNEL"));
        assertEquals("3", env.get("MPIPROXY_RANK"));
    }

    @Test
    void shouldKeepJavaHomeOfRequestAndSkipMissingJavaHome() {
        assertEquals("/mine", RankCommand.environment(request(1, List.of(), Map.of("JAVA_HOME", "/mine")), "/jdk")
                .get("JAVA_HOME"));
        assertFalse(RankCommand.environment(request(1, List.of(), Map.of()), null).containsKey("JAVA_HOME"));
        assertFalse(RankCommand.environment(request(1, List.of(), Map.of()), "").containsKey("JAVA_HOME"));
    }

    @Test
    void shouldFormatJobIdAsSixteenLowerCaseHexDigits() {
        assertEquals("0000000000000000", RankCommand.jobIdHex(0));
        assertEquals("7fffffffffffffff", RankCommand.jobIdHex(Long.MAX_VALUE));
        assertEquals("ffffffffffffffff", RankCommand.jobIdHex(-1));
        assertEquals("00000000deadbeef", RankCommand.jobIdHex(0xDEADBEEFL));
    }
}
