package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.protocol.ExecEnvironment;
import org.mpiproxy.protocol.V2HeaderDescriptor;

import picocli.CommandLine;

/**
 * {@code mpiproxy run} with MPICH Hydra's options, as Hydra spells them: each command line read
 * into the job it asks for (nodes, ranks, environment, tags, binding, working directory), and bad
 * usage refused in one line.
 */
class HydraOptionsTest {

    @TempDir
    Path dir;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final Map<String, String> env = new HashMap<>();

    @BeforeEach
    void key() throws Exception {
        Path key = dir.resolve("mpiproxy.key");
        org.mpiproxy.protocol.ClusterKeys.generateIfMissing(key);
        env.put("MPIPROXY_KEY_FILE", key.toString());
    }

    private RunCommand.Launch launch() {
        return new RunCommand.Launch(env, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    /** @return the job {@code mpiproxy run ARGS} asks for, without running it */
    private JobRunner.Settings settings(String... args) throws RunCommand.Usage {
        CommandLine cli = MpiproxyCommand.commandLine(launch());
        List<String> all = new java.util.ArrayList<>(List.of("run"));
        all.addAll(List.of(args));
        cli.parseArgs(all.toArray(String[]::new));
        return ((RunCommand) cli.getSubcommands().get("run").getCommand()).settings();
    }

    private static List<String> entries(JobRunner.Settings settings) {
        return settings.ranks().stream().map(Placement::hostEntry).toList();
    }

    private int execute(String... args) {
        return MpiproxyCommand.execute(args, env, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void shouldPlaceRanksOnTheNodesOfMinusHostsAndMinusHost() throws Exception {
        JobRunner.Settings hosts = settings("-hosts", "10.0.0.1,10.0.0.2:2", "prog");
        // rank 0 takes the first slot (it runs here), ranks 1 and 2 the two of 10.0.0.2
        assertEquals(List.of("10.0.0.2:6660:0", "10.0.0.2:6660:0"), entries(hosts));

        JobRunner.Settings host = settings("-host", "10.0.0.3:3", "prog");
        assertEquals(List.of("10.0.0.3:6660:0", "10.0.0.3:6660:0"), entries(host));
    }

    @Test
    void shouldReadTheHostfileOfMinusFMinusHostfileAndMinusMachinefile() throws Exception {
        Path hostfile = dir.resolve("hosts");
        Files.writeString(hostfile, "10.0.0.1:2\n10.0.0.2\n");
        for (String option : List.of("-f", "-hostfile", "-machinefile", "--hostfile")) {
            JobRunner.Settings settings = settings(option, hostfile.toString(), "prog");
            assertEquals(List.of("10.0.0.1:6660:0", "10.0.0.2:6660:0"), entries(settings), option);
        }
    }

    @Test
    void shouldPutMinusPpnRanksOnEveryNode() throws Exception {
        JobRunner.Settings settings = settings("-hosts", "10.0.0.1,10.0.0.2", "-ppn", "2", "prog");

        assertEquals(List.of("10.0.0.1:6660:0", "10.0.0.2:6660:0", "10.0.0.2:6660:0"), entries(settings));
    }

    @Test
    void shouldTakeTheWorldSizeFromMinusNAndMinusNp() throws Exception {
        assertEquals(2, settings("-np", "3", "-hosts", "10.0.0.1:4", "prog").ranks().size());
        assertEquals(1, settings("-n", "2", "-hosts", "10.0.0.1:4", "prog").ranks().size());
    }

    @Test
    void shouldGiveEveryRankTheVariablesOfGenvEnvAndGenvlist() throws Exception {
        env.put("FROM_SHELL", "shell value");
        env.put("ALSO_SET", "x");

        JobRunner.Settings settings = settings("-hosts", "10.0.0.1:2", "-genv", "GREETING", "hi there", "-env",
                "COLOR", "blue", "-genvlist", "FROM_SHELL,ALSO_SET", "prog", "arg");

        assertEquals(Map.of("GREETING", "hi there", "COLOR", "blue", "FROM_SHELL", "shell value", "ALSO_SET", "x"),
                settings.environment());
        assertEquals("prog", settings.program());
        assertEquals(List.of("arg"), settings.args());
        assertFalse(settings.environment().containsKey("NOT_ASKED_FOR"));
    }

    @Test
    void shouldGiveEveryRankThisShellsVariablesWithGenvallAndLetGenvWin() throws Exception {
        env.put("FROM_SHELL", "shell value");
        env.put("OVERRIDDEN", "old");

        JobRunner.Settings settings = settings("-hosts", "10.0.0.1:2", "-genvall", "-genv", "OVERRIDDEN", "new",
                "prog");

        assertEquals("shell value", settings.environment().get("FROM_SHELL"));
        assertEquals("new", settings.environment().get("OVERRIDDEN"));
        // the launcher's own settings are not the ranks'
        assertFalse(settings.environment().containsKey("MPIPROXY_KEY_FILE"), settings.environment().toString());
        // -genvnone is the default: only what is named
        assertEquals(Map.of(), settings("-hosts", "10.0.0.1:2", "-genvnone", "prog").environment());
    }

    @Test
    void shouldNotPassAnotherProcessManagersVariablesWithGenvallButTheUsersMcaParameters() throws Exception {
        // a launcher started inside a Slurm step or a Hydra job sees its own manager's variables
        env.put("PMI_FD", "5");
        env.put("PMI_RANK", "3");
        env.put("PMIX_RANK", "3");
        env.put("OMPI_COMM_WORLD_RANK", "3");
        env.put("OMPI_MCA_btl", "self,vader");
        env.put("PMIX_MCA_gds", "hash");

        Map<String, String> ranks = settings("-hosts", "10.0.0.1:2", "-genvall", "prog").environment();

        for (String name : List.of("PMI_FD", "PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK")) {
            assertFalse(ranks.containsKey(name), name + " in " + ranks);
        }
        assertEquals("self,vader", ranks.get("OMPI_MCA_btl"));
        assertEquals("hash", ranks.get("PMIX_MCA_gds"));
    }

    @Test
    void shouldCarryGenvallWithAFiveKibEnvironmentOncePerNodeBesidesEveryExec() throws Exception {
        for (int i = 0; i < 80; i++) {
            env.put(String.format("FROM_SHELL_%03d", i), "v".repeat(50) + i % 10);
        }
        JobRunner.Settings settings = settings("-hosts", "10.0.0.1:2,10.0.0.2:2", "-genvall", "-np", "4", "prog");
        assertTrue(ExecEnvironment.encode(settings.environment()).length >= 5 * 1024);

        List<Map<String, String>> environments = RankWorld.environments(settings.ranks(), 4, settings.environment(),
                false);
        V2ExecPayloads payloads = V2ExecPayloads.of("prog", List.of(), environments);

        assertEquals(V2HeaderDescriptor.FLAG_ENVIRONMENT, payloads.flags(), "too large for one EXEC: named");
        assertTrue(payloads.environmentLength() >= 5 * 1024, String.valueOf(payloads.environmentLength()));
        for (int r = 1; r < 4; r++) {
            assertTrue(payloads.payload(r).length <= V2ExecPayloads.MAX_PAYLOAD);
        }
        // the launcher's own settings stay out of the environment, as out of every EXEC
        assertFalse(settings.environment().containsKey("MPIPROXY_KEY_FILE"));
    }

    @Test
    void shouldRefuseGenvOptionsThatNameNoUsableVariable() {
        RunCommand.Usage unset = assertThrows(RunCommand.Usage.class,
                () -> settings("-hosts", "10.0.0.1:2", "-genvlist", "NOT_SET_ANYWHERE", "prog"));
        assertEquals("-genvlist NOT_SET_ANYWHERE: not set here; give -x NOT_SET_ANYWHERE=VALUE", unset.getMessage());

        RunCommand.Usage name = assertThrows(RunCommand.Usage.class,
                () -> settings("-hosts", "10.0.0.1:2", "-genv", "1BAD", "v", "prog"));
        assertEquals("-genv 1BAD: '1BAD' is not a variable name", name.getMessage());

        RunCommand.Usage both = assertThrows(RunCommand.Usage.class,
                () -> settings("-hosts", "10.0.0.1:2", "-genvall", "-genvnone", "prog"));
        assertTrue(both.getMessage().startsWith("-genvnone passes none"), both.getMessage());
    }

    @Test
    void shouldTagOutputWithMinusLAndRefuseItWithUntaggedOutput() throws Exception {
        assertTrue(settings("-l", "-hosts", "10.0.0.1:2", "prog").tagOutput());
        assertTrue(settings("-prepend-rank", "-hosts", "10.0.0.1:2", "prog").tagOutput());
        assertFalse(settings("--raw", "-hosts", "10.0.0.1:2", "prog").tagOutput());

        RunCommand.Usage raw = assertThrows(RunCommand.Usage.class,
                () -> settings("-l", "--raw", "-hosts", "10.0.0.1:2", "prog"));
        assertEquals("-l tags every line with its rank, --raw leaves the tags out: give one of them", raw.getMessage());
        assertThrows(RunCommand.Usage.class,
                () -> settings("-prepend-rank", "--no-tag-output", "-hosts", "10.0.0.1:2", "prog"));
    }

    @Test
    void shouldBindRanksToTheirSlotsCoresWithBindToCore() throws Exception {
        JobRunner.Settings core = settings("-bind-to", "core", "-hosts", "10.0.0.1:3", "prog");
        assertEquals(List.of("10.0.0.1:6660:1", "10.0.0.1:6660:2"), entries(core));

        JobRunner.Settings none = settings("-bind-to", "none", "-hosts", "10.0.0.1:3", "prog");
        assertEquals(List.of("10.0.0.1:6660:0", "10.0.0.1:6660:0"), entries(none));

        RunCommand.Usage socket = assertThrows(RunCommand.Usage.class,
                () -> settings("-bind-to", "socket", "-hosts", "10.0.0.1:3", "prog"));
        assertTrue(socket.getMessage().startsWith("-bind-to socket: expected core or none"), socket.getMessage());
        RunCommand.Usage disagree = assertThrows(RunCommand.Usage.class,
                () -> settings("--bind", "core", "-bind-to", "none", "-hosts", "10.0.0.1:3", "prog"));
        assertEquals("--bind core and -bind-to none disagree: give one of them", disagree.getMessage());
    }

    @Test
    void shouldStartTheRanksInMinusWdirOrElseInThisDirectory() throws Exception {
        Path here = Path.of("").toAbsolutePath();

        assertEquals(Path.of("/srv/run 1"), settings("-wdir", "/srv/run 1", "-hosts", "10.0.0.1:2", "prog")
                .workingDirectory());
        assertEquals(here.resolve("out/run2"), settings("-wdir", "out/../out/run2", "-hosts", "10.0.0.1:2", "prog")
                .workingDirectory());
        assertEquals(Path.of("/srv/x"), settings("--chdir", "/srv/x", "-hosts", "10.0.0.1:2", "prog")
                .workingDirectory());
        env.put("PWD", dir.toString());
        // a $PWD that is not this directory is not taken for it
        assertEquals(here, settings("-hosts", "10.0.0.1:2", "prog").workingDirectory());
    }

    @Test
    void shouldEndTheOptionsAtDoubleDash() throws Exception {
        JobRunner.Settings settings = settings("-hosts", "10.0.0.1:2", "--", "-l", "-n", "5");

        assertEquals("-l", settings.program());
        assertEquals(List.of("-n", "5"), settings.args());
        assertEquals(1, settings.ranks().size());
    }

    @Test
    void shouldRunOnThisNodesProxyWithOneSlotPerCoreWithoutNodesOrSlurm() throws Exception {
        int cores = Runtime.getRuntime().availableProcessors();

        JobRunner.Settings settings = settings("prog");

        assertEquals(java.util.Collections.nCopies(cores - 1, "127.0.0.1:6660:0"), entries(settings));
        assertEquals(List.of("127.0.0.1:7000:0", "127.0.0.1:7000:0"),
                entries(settings("-n", "3", "--oversubscribe", "--port", "7000", "prog")));
        RunCommand.Usage more = assertThrows(RunCommand.Usage.class, () -> settings("-n", "" + (cores + 1), "prog"));
        assertTrue(more.getMessage().contains(" of 127.0.0.1:" + cores + " (" + cores + ")"), more.getMessage());

        // inside a Slurm allocation its nodes are the job's, not this one
        env.put("SLURM_JOB_NODELIST", "10.0.0.[7-8]");
        assertEquals(List.of("10.0.0.8:6660:0"), entries(settings("prog")));
    }

    @Test
    void shouldRefuseAnUnknownOptionInOneLineWithStatusTwo() {
        assertEquals(2, execute("run", "-foo", "-hosts", "127.0.0.1:1", "prog"));
        assertEquals("mpiproxy: unknown option '-foo' (mpiproxy run --help lists the options)\n", err());
        assertEquals("", out.toString(StandardCharsets.UTF_8));

        err.reset();
        assertEquals(2, execute("-hosts", "127.0.0.1:1", "prog"));
        assertEquals("mpiproxy: unknown option '-hosts' (mpiproxy --help lists the commands)\n", err());

        err.reset();
        assertEquals(2, execute("run", "-genv", "ONLY_A_NAME"));
        assertEquals(1, err().lines().count(), err());
        assertTrue(err().startsWith("mpiproxy: option '-genv' at index 0 (NAME VALUE) requires at least 2 values"),
                err());
    }

    @Test
    void shouldNeverTakeASingleDashWordForClusteredLettersAndPrintTheUsage() {
        // -h is help, -n and -x take values, -q and -v are flags: none of these words is theirs
        for (String word : List.of("-hello", "-help", "-hostlist", "-n4", "-xFOO=1", "-qv", "-verbose", "-V1")) {
            out.reset();
            err.reset();
            assertEquals(2, execute("run", word, "-hosts", "127.0.0.1:1", "prog"), word);
            assertEquals("mpiproxy: unknown option '" + word + "' (mpiproxy run --help lists the options)\n", err(),
                    word);
            assertEquals("", out.toString(StandardCharsets.UTF_8), word);
        }
        err.reset();
        // a Hydra option without its value is bad usage too, never help
        assertEquals(2, execute("run", "-hosts"));
        assertEquals(1, err().lines().count(), err());
        assertEquals("", out.toString(StandardCharsets.UTF_8));
    }

    @Test
    void shouldNameTheStageOptionWhenANodeHasNoProgramOfAPathsName() {
        List<V2Session.Failure> noProgram = List.of(new V2Session.Failure(1,
                "MPI_ERR_IO: no program 'hello' in [/opt/mpiproxy/programs]"));
        JobRunner.Settings path = new JobRunner.Settings("./hello", List.of(), List.of(), Map.of(), true, null,
                null, null, null, 0, "v2", null);

        assertEquals("the nodes run the program named hello from their programs/ directory (or program.path), not"
                + " the file ./hello: --stage copies it to them", JobRunner.stageHint(path, noProgram));
        JobRunner.Settings name = new JobRunner.Settings("hello", List.of(), List.of(), Map.of(), true, null,
                null, null, null, 0, "v2", null);
        assertNull(JobRunner.stageHint(name, noProgram));
        assertNull(JobRunner.stageHint(path, List.of(new V2Session.Failure(1, "MPI_ERR_IO: cannot start program"
                + " 'hello': permission denied"))));
    }
}
