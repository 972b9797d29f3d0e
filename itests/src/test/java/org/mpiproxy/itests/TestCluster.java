package org.mpiproxy.itests;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Nodes of one test cluster: distributions unpacked side by side, each proxy on its own
 * loopback address, one node map ({@code NAME ADDRESS:PORT} lines) and one cluster key for all.
 */
final class TestCluster {

    final List<KarafNode> nodes = new ArrayList<>();
    final Path work;
    final Path nodeMap;
    final Path key;

    /** Something to do on a node before it starts (programs to copy, settings). */
    interface Preparation {
        void prepare(KarafNode node) throws Exception;
    }

    private TestCluster(Path work) {
        this.work = work;
        this.nodeMap = work.resolve("node-map");
        this.key = work.resolve("cluster.key");
    }

    /**
     * Creates, starts and waits for {@code count} nodes named {@code prefix1..} on
     * 127.0.0.{firstAddress}, ...
     *
     * @param directory the cluster's directory below the itest target (emptied first)
     */
    static TestCluster start(String directory, String prefix, int firstAddress, int count, Preparation before)
            throws Exception {
        Path target = Paths.get(System.getProperty("mpiproxy.itest.target"));
        Path distribution = Paths.get(System.getProperty("mpiproxy.itest.distribution"));
        Path work = target.resolve(directory);
        KarafNode.deleteTree(work);
        Files.createDirectories(work);
        TestCluster cluster = new TestCluster(work);
        StringBuilder map = new StringBuilder("# node name -> proxy\n");
        for (int i = 1; i <= count; i++) {
            KarafNode node = KarafNode.create(prefix + i, distribution, work, "127.0.0." + (firstAddress + i - 1));
            cluster.nodes.add(node);
            map.append(node.name).append(' ').append(node.address).append(':').append(node.port).append('\n');
        }
        Files.writeString(cluster.nodeMap, map);
        org.mpiproxy.protocol.ClusterKeys.generateIfMissing(cluster.key);
        for (KarafNode node : cluster.nodes) {
            node.useKey(cluster.key);
            before.prepare(node);
            node.start();
        }
        for (KarafNode node : cluster.nodes) {
            node.awaitProxy(300);
        }
        return cluster;
    }

    /** @return every rank running on any node */
    List<ProcessHandle> ranks() {
        List<ProcessHandle> all = new ArrayList<>();
        nodes.forEach(n -> all.addAll(n.ranks()));
        return all;
    }

    /** What one launcher run gave: its exit code, its output lines, its error stream. */
    record Run(int exit, List<String> out, String err) {
    }

    /**
     * Runs {@code mpiproxy run} against this cluster's node map and key and waits for it; on a
     * timeout it kills the launcher and its children (rank 0 first, since an MPI rank may poll
     * until it is killed) and fails.
     *
     * @param environment added to the launcher's environment
     */
    Run launch(Path cli, long timeoutSeconds, Map<String, String> environment, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java")
                .toString(), "-jar", cli.toString(), "run", "--key-file", key.toString(), "--node-map",
                nodeMap.toString()));
        command.addAll(List.of(args));
        return run(command, environment, null, work.resolve("launcher.err"), timeoutSeconds);
    }

    /**
     * Runs a launcher's command line and waits for it; on a timeout kills it and its children
     * (rank 0 first, since an MPI rank may poll until it is killed) and fails.
     *
     * @param environment added to the inherited environment ({@code null} values remove a variable)
     * @param directory   its working directory, or {@code null} for this one's
     * @param err         where its standard error goes
     */
    static Run run(List<String> command, Map<String, String> environment, Path directory, Path err,
                   long timeoutSeconds) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(err.toFile());
        if (directory != null) {
            builder.directory(directory.toFile());
        }
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        environment.forEach((name, value) -> {
            if (value == null) {
                builder.environment().remove(name);
            } else {
                builder.environment().put(name, value);
            }
        });
        Process launcher = builder.start();
        CompletableFuture<List<String>> lines = CompletableFuture.supplyAsync(() -> {
            try {
                return List.of(new String(launcher.getInputStream().readAllBytes(), StandardCharsets.UTF_8)
                        .split("\n"));
            } catch (IOException e) {
                return List.of("(" + e + ")");
            }
        });
        boolean ended = launcher.waitFor(timeoutSeconds, TimeUnit.SECONDS);
        if (!ended) {
            launcher.descendants().forEach(ProcessHandle::destroyForcibly);
            launcher.destroyForcibly();
        }
        assertTrue(ended, "launcher still runs after " + timeoutSeconds + " s: " + Files.readString(err));
        return new Run(launcher.exitValue(), lines.get(10, TimeUnit.SECONDS), Files.readString(err));
    }

    void stop() throws InterruptedException {
        for (KarafNode node : nodes) {
            node.stop();
        }
    }

    /** @return whether MPICH's compiler is here (Debian: mpich and libmpich-dev) */
    static boolean hasMpicc() {
        return Files.isExecutable(Paths.get("/usr/bin/mpicc"));
    }

    /**
     * Compiles one of the project's MPI test programs, {@code src/test/c/<program>.c}, with MPICH's mpicc.
     *
     * @return the binary, {@code <into>/<program>}
     */
    static Path compileMpi(String program, Path into) throws Exception {
        Path source = Paths.get("src/test/c", program + ".c").toAbsolutePath();
        Path binary = into.resolve(program);
        Process cc = new ProcessBuilder("mpicc", "-O2", "-o", binary.toString(), source.toString())
                .redirectErrorStream(true).start();
        String out = new String(cc.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        if (!cc.waitFor(120, java.util.concurrent.TimeUnit.SECONDS) || cc.exitValue() != 0) {
            throw new IllegalStateException("mpicc " + source + " failed: " + out);
        }
        return binary;
    }
}
