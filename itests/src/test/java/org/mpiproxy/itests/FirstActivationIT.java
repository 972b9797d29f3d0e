package org.mpiproxy.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A node whose configuration is bad from its first start, as an operator's typo leaves it: each
 * bad value is one line in {@code karaf.log} and no stack trace, the proxy does not serve, and
 * once the values are fixed in the files the node serves and every {@code mpi:} command is there,
 * without a restart.
 */
class FirstActivationIT {

    private static final String NOT_STARTED = "; no good configuration yet: not started until the value is fixed";

    private KarafNode node;

    @AfterEach
    void stopNode() throws InterruptedException {
        if (node != null) {
            node.stop();
        }
    }

    @Test
    void shouldSayInOneLinePerBadFirstValueAndServeOnceTheValuesAreFixed() throws Exception {
        Path target = Paths.get(System.getProperty("mpiproxy.itest.target"));
        Path distribution = Paths.get(System.getProperty("mpiproxy.itest.distribution"));
        Path work = target.resolve("first-activation");
        KarafNode.deleteTree(work);
        Files.createDirectories(work);
        node = KarafNode.create("f1", distribution, work, "127.0.0.31");
        node.configure("org.mpiproxy.proxy.cfg", "stop.grace.seconds", "ten");
        node.configure("org.mpiproxy.channel.shm.cfg", "ring.capacity", "lots");
        node.start();

        String proxyLine = "org.mpiproxy.proxy: stop.grace.seconds=ten is not a whole number" + NOT_STARTED;
        String channelLine = "org.mpiproxy.channel.shm: ring.capacity=lots is not a whole number" + NOT_STARTED;
        awaitLog(proxyLine, 300);
        awaitLog(channelLine, 60);
        assertThrows(IOException.class, () -> node.awaitProxy(3), "a node without a good configuration does not serve");

        node.configure("org.mpiproxy.proxy.cfg", "stop.grace.seconds", "2");
        node.configure("org.mpiproxy.channel.shm.cfg", "ring.capacity", "262144");
        node.awaitProxy(60);
        String health = awaitConsole("mpi:health", "Health: OK", 60);
        assertTrue(health.contains("shm.free       | OK"), health);

        String log = node.log();
        // the readiness probe (a v1 EXEC of world size 1) is refused with a warning of its own
        List<String> problems = problemLines(log).stream().filter(l -> !l.startsWith("EXEC of rank 1 from ")).sorted()
                .toList();
        assertEquals(List.of(channelLine, proxyLine), problems,
                "one line per bad value, and none about the services the proxy did not provide");
        assertTrue(log.lines().noneMatch(l -> l.startsWith("\tat ") || l.contains("Exception")),
                "no stack trace, no exception: " + log.lines().filter(l -> l.contains("Exception")).toList());
    }

    /** @return the messages of the log's ERROR and WARN lines from the project's bundles, in order */
    private static List<String> problemLines(String log) {
        return log.lines()
                .filter(l -> (l.contains("| ERROR |") || l.contains("| WARN  |")) && l.contains("0.1.0.SNAPSHOT"))
                .map(l -> {
                    String[] fields = l.split(" \\| ", 6);
                    return fields.length == 6 ? fields[5] : l;
                })
                .toList();
    }

    private void awaitLog(String line, long seconds) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!node.log().contains(line)) {
            assertTrue(System.nanoTime() < deadline, "no line '" + line + "' in karaf.log within " + seconds + " s:\n"
                    + String.join("\n", problemLines(node.log())));
            Thread.sleep(100);
        }
    }

    private String awaitConsole(String command, String expected, long seconds) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        String out = node.console(command);
        while (!out.contains(expected)) {
            assertTrue(System.nanoTime() < deadline, "'" + command + "' printed no '" + expected + "' within " + seconds
                    + " s: " + out);
            Thread.sleep(500);
            out = node.console(command);
        }
        return out;
    }
}
