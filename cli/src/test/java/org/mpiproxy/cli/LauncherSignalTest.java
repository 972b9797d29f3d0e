package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The launcher as its own process: SIGINT stops rank 0, a second SIGINT does not wait for the grace. */
class LauncherSignalTest {

    @TempDir
    Path dir;

    private static void sigint(Process p) throws Exception {
        Process kill = new ProcessBuilder("sh", "-c", "kill -INT " + p.pid()).inheritIO().start();
        assertEquals(0, kill.waitFor());
    }

    @Test
    void shouldStopAtOnceOnASecondSigintAndExitWith130() throws Exception {
        Path program = dir.resolve("stubborn");
        Files.writeString(program, "#!/bin/sh\ntrap '' TERM INT\necho started\nwhile :; do sleep 1; done\n");
        assertTrue(program.toFile().setExecutable(true));
        Path key = dir.resolve("mpiproxy.key");
        org.mpiproxy.protocol.ClusterKeys.generateIfMissing(key);
        ProcessBuilder builder = new ProcessBuilder(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), MpiproxyCommand.class.getName(), "run", "--grace", "120",
                "--hosts", "127.0.0.1:1", program.toString());
        builder.environment().put("MPIPROXY_KEY_FILE", key.toString());
        Process launcher = builder.start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(launcher.getInputStream(), StandardCharsets.UTF_8));
            BufferedReader err = new BufferedReader(new InputStreamReader(launcher.getErrorStream(), StandardCharsets.UTF_8));
            assertEquals("[0] started", out.readLine());

            sigint(launcher);
            assertEquals("mpiproxy: stopping the job (SIGINT)", err.readLine());
            long start = System.nanoTime();
            sigint(launcher);

            assertTrue(launcher.waitFor(20, TimeUnit.SECONDS), "launcher waits for the grace of 120 s");
            assertEquals(130, launcher.exitValue());
            assertEquals("mpiproxy: SIGINT again: stopping at once", err.readLine());
            assertTrue(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start) < 20);
        } finally {
            launcher.destroyForcibly();
        }
    }
}
