package org.mpiproxy.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** A rank starts where its launcher asked when that directory is here, else in its user's home with one line. */
class RankWorkingDirectoryTest {

    @TempDir
    Path temp;

    @AfterEach
    void spawnAsConfigured() {
        System.clearProperty(NativeSpawn.ENABLE_PROPERTY);
    }

    @Test
    void shouldKeepTheProxysDirectoryWhenNoneIsAsked() {
        RankWorkingDirectory.Choice c = RankWorkingDirectory.choose(Map.of(), 1, null, uid -> "/nowhere", "/home/p");
        assertNull(c.directory());
        assertNull(c.note());
        assertEquals(List.of("prog"), c.command(List.of("prog")));
    }

    @Test
    void shouldStartInTheAskedDirectoryWithoutAWord() {
        RankWorkingDirectory.Choice c = RankWorkingDirectory.choose(Map.of(RankWorkingDirectory.ENV, temp.toString()),
                1, null, uid -> null, "/");
        assertEquals(temp, c.directory());
        assertNull(c.note());
    }

    @Test
    void shouldFallBackToTheRankUsersHomeWithOneLine() throws Exception {
        Path home = Files.createDirectory(temp.resolve("home-of-1000"));
        Map<String, String> env = Map.of(RankWorkingDirectory.ENV, temp.resolve("missing").toString());

        RankWorkingDirectory.Choice asUser = RankWorkingDirectory.choose(env, 3, new long[] {1000, 1000},
                uid -> uid == 1000 ? home.toString() : null, "/root");
        assertEquals(home, asUser.directory());
        assertEquals("mpiproxy: rank 3: no directory " + temp.resolve("missing") + " on this node; started in " + home,
                asUser.note());

        RankWorkingDirectory.Choice own = RankWorkingDirectory.choose(env, 3, null, uid -> null, home.toString());
        assertEquals(home, own.directory());

        RankWorkingDirectory.Choice homeless = RankWorkingDirectory.choose(env, 3, new long[] {7, 7}, uid -> null, "/x");
        assertEquals(Path.of("/"), homeless.directory());

        RankWorkingDirectory.Choice relative = RankWorkingDirectory.choose(Map.of(RankWorkingDirectory.ENV, "rel\n"),
                2, null, uid -> null, home.toString());
        assertEquals("mpiproxy: rank 2: the working directory 'rel?' is not an absolute path; started in " + home,
                relative.note());
    }

    @Test
    void shouldFindAHomeInThePasswordFile() {
        assertEquals("/root", RankWorkingDirectory.homeOf(0));
    }

    @ParameterizedTest(name = "native spawn {0}")
    @ValueSource(booleans = {true, false})
    void shouldRunTheRankInTheAskedDirectory(boolean nativeSpawn) throws Exception {
        System.setProperty(NativeSpawn.ENABLE_PROPERTY, Boolean.toString(nativeSpawn));
        Path work = Files.createDirectory(temp.resolve("work dir"));
        Path script = TestScripts.write(temp, "where", "pwd > where.txt\n");

        SpawnedRankProcess p = RankProcessStarter.start("where", List.of(script.toString()),
                Map.of(RankWorkingDirectory.ENV, work.toString()), temp.resolve("logs"), 1, 1, 0,
                OutputSettings.DEFAULT, null);

        assertEquals(0, p.onExit().get(60, TimeUnit.SECONDS));
        assertEquals(work.toString(), Files.readString(work.resolve("where.txt")).trim());
        assertEquals("", Files.readString(RankProcessStarter.errorFile(temp.resolve("logs"), 1)));
    }

    @ParameterizedTest(name = "native spawn {0}")
    @ValueSource(booleans = {true, false})
    void shouldSayWhereTheRankStartedWhenTheDirectoryIsNotHere(boolean nativeSpawn) throws Exception {
        System.setProperty(NativeSpawn.ENABLE_PROPERTY, Boolean.toString(nativeSpawn));
        Path missing = temp.resolve("not-on-this-node");
        Path out = temp.resolve("where.txt");
        Path script = TestScripts.write(temp, "where", "pwd > \"$OUT\"\necho \"pid $$\" >&2\n");

        SpawnedRankProcess p = RankProcessStarter.start("where", List.of(script.toString()),
                Map.of(RankWorkingDirectory.ENV, missing.toString(), "OUT", out.toString()), temp.resolve("logs"), 1,
                2, 0, OutputSettings.DEFAULT, null);

        assertEquals(0, p.onExit().get(60, TimeUnit.SECONDS));
        Path home = Path.of(System.getProperty("user.home"));
        assertEquals(home.toRealPath().toString(), Path.of(Files.readString(out).trim()).toRealPath().toString());
        List<String> err = Files.readAllLines(RankProcessStarter.errorFile(temp.resolve("logs"), 2));
        assertEquals(List.of("mpiproxy: rank 2: no directory " + missing + " on this node; started in " + home,
                "pid " + p.pid()), err, "the note, then the rank itself, as the same process (exec)");
    }
}
