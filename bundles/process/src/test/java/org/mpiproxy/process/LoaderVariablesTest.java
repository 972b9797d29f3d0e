package org.mpiproxy.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** With a rank user, nothing of the request's loader variables acts while root still runs. */
class LoaderVariablesTest {

    @TempDir
    Path temp;

    @AfterEach
    void spawnAsConfigured() {
        System.clearProperty(NativeSpawn.ENABLE_PROPERTY);
    }

    @Test
    void shouldMoveTheLoadersVariablesAsideAndPutThemBackAfterTheDrop() {
        List<String> moved = new ArrayList<>();
        List<String> lines = LoaderVariables.moveAside(List.of("PATH=/bin", "LD_PRELOAD=/x.so", "GLIBC_TUNABLES=a=1",
                "MALLOC_CHECK_=3", "LD_BAD-NAME=1", "HOME=/h"), moved);

        assertEquals(List.of("PATH=/bin", "MPIPROXY_AFTER_DROP_LD_PRELOAD=/x.so",
                "MPIPROXY_AFTER_DROP_GLIBC_TUNABLES=a=1", "MPIPROXY_AFTER_DROP_MALLOC_CHECK_=3", "HOME=/h"), lines);
        assertEquals(List.of("LD_PRELOAD", "GLIBC_TUNABLES", "MALLOC_CHECK_"), moved);
        assertEquals(List.of("/bin/sh", "-c", "export LD_PRELOAD=\"$MPIPROXY_AFTER_DROP_LD_PRELOAD\"; unset"
                + " MPIPROXY_AFTER_DROP_LD_PRELOAD; exec \"$@\"", "sh", "prog", "a b"),
                LoaderVariables.restoring(List.of("LD_PRELOAD"), List.of("prog", "a b")));
        assertEquals(List.of("prog"), LoaderVariables.restoring(List.of(), List.of("prog")));

        Map<String, String> env = new HashMap<>(Map.of("LD_LIBRARY_PATH", "/l", "USER", "u"));
        List<String> fromMap = new ArrayList<>();
        LoaderVariables.moveAside(env, fromMap);
        assertEquals(Map.of("MPIPROXY_AFTER_DROP_LD_LIBRARY_PATH", "/l", "USER", "u"), env);
        assertEquals(List.of("LD_LIBRARY_PATH"), fromMap);
    }

    @ParameterizedTest(name = "native spawn {0}")
    @ValueSource(booleans = {true, false})
    void shouldLoadAPreloadedLibraryOnlyAsTheRanksUser(boolean nativeSpawn) throws Exception {
        assumeTrue(((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).longValue() == 0, "needs root");
        assumeTrue(new ProcessBuilder("cc", "--version").start().waitFor() == 0, "needs a C compiler");
        System.setProperty(NativeSpawn.ENABLE_PROPERTY, Boolean.toString(nativeSpawn));
        Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path marks = Files.createDirectory(temp.resolve("marks"));
        Files.setPosixFilePermissions(marks, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path mark = marks.resolve("uids");
        // a library that records, as each program it is loaded into starts, the uid it runs as
        Path source = Files.writeString(temp.resolve("mark.c"), "#include <stdio.h>\n#include <stdlib.h>\n"
                + "#include <unistd.h>\n__attribute__((constructor)) static void mark(void) {\n"
                + "  const char *f = getenv(\"MARK\"); FILE *o = f ? fopen(f, \"a\") : NULL;\n"
                + "  if (o) { fprintf(o, \"%d\\n\", (int) getuid()); fclose(o); }\n}\n");
        Path library = temp.resolve("mark.so");
        Process cc = new ProcessBuilder("cc", "-shared", "-fPIC", "-o", library.toString(), source.toString())
                .redirectErrorStream(true).start();
        String ccOut = new String(cc.getInputStream().readAllBytes());
        assertTrue(cc.waitFor(60, TimeUnit.SECONDS) && cc.exitValue() == 0, ccOut);
        Path script = TestScripts.write(temp, "show", "echo \"$LD_PRELOAD\"\nenv | grep -c MPIPROXY_AFTER_DROP_ || true\n");

        SpawnedRankProcess p = RankProcessStarter.start("show", List.of(script.toString()),
                Map.of("LD_PRELOAD", library.toString(), "MARK", mark.toString()), temp.resolve("logs"), 1, 1, 0,
                OutputSettings.DEFAULT, RankEnvironment.parseAllowlist(RankEnvironment.DEFAULT_ALLOWLIST), -1,
                new long[] {65534, 65534});

        assertEquals(0, p.onExit().get(60, TimeUnit.SECONDS),
                Files.readString(RankProcessStarter.errorFile(temp.resolve("logs"), 1)));
        List<String> uids = Files.readAllLines(mark);
        assertFalse(uids.isEmpty(), "the rank never loaded its library");
        assertFalse(uids.contains("0"), "the library ran as root: " + uids);
        assertTrue(uids.stream().allMatch("65534"::equals), uids.toString());
        assertEquals(library + "\n0\n", Files.readString(RankProcessStarter.outputFile(temp.resolve("logs"), 1)),
                "the rank has its LD_PRELOAD back and nothing moved aside left over");
    }
}
