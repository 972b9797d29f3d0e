package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

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

    /**
     * @return whether this JVM was started with SIGINT ignored (as a shell starts a background
     *         job): a launcher started from here inherits that and can never see a SIGINT
     */
    private static boolean sigintIgnored() throws Exception {
        Path status = Path.of("/proc/self/status");
        if (!Files.exists(status)) {
            return false;
        }
        for (String line : Files.readAllLines(status)) {
            if (line.startsWith("SigIgn:")) {
                // SIGINT is signal 2: bit 1 of the mask
                return (Long.parseUnsignedLong(line.substring("SigIgn:".length()).strip(), 16) & 2L) != 0;
            }
        }
        return false;
    }

    @Test
    void shouldStopAtOnceOnASecondSigintAndExitWith130() throws Exception {
        assumeFalse(sigintIgnored(), "SIGINT is ignored in this process and its children (a background job?)");
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
            sigint(launcher);

            // half the grace: a launcher that waited for it is still there, one that did not is long gone
            assertTrue(launcher.waitFor(60, TimeUnit.SECONDS), "launcher waits for the grace of 120 s");
            assertEquals(130, launcher.exitValue());
            assertEquals("mpiproxy: SIGINT again: stopping at once", err.readLine());
        } finally {
            launcher.destroyForcibly();
        }
    }
}
