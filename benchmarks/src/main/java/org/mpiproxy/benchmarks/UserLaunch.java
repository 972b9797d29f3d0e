package org.mpiproxy.benchmarks;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.mpiproxy.proxy.internal.EmbeddedProxy;
import org.mpiproxy.testing.MungeDaemon;

/**
 * What a launch costs a user who holds no cluster key (docs/protocol-v2.md 4.1-4.3), side by side
 * with a holder of the key: {@code mpiproxy run -n 8 /bin/true} (the distribution's script and
 * launcher jar) against one embedded proxy, in interleaved rounds, as
 * <ol>
 * <li>the key holder: the harness's user with {@code --key-file};</li>
 * <li>the key holder with {@code --user}: a credential it makes for the user, so the job runs as a
 * user's does (credential presented to the node, ranks as the user) without asking for one;</li>
 * <li>a user who asks the proxy's local socket for her job credential (4.2);</li>
 * <li>a user whose credential MUNGE vouches for (4.3): the socket named does not exist, so the
 * launcher asks the node over UDP, as on a login node;</li>
 * </ol>
 * and the anchor, one MUNGE credential made and decoded as the launcher does it (the programs
 * {@code munge} and {@code unmunge}). The users are uid {@value #NOBODY} ({@code setpriv}, as the
 * proxy starts a user's ranks) when the harness is root, else the harness's own uid without the
 * key file. Each launch is checked against the proxy's counters: a row measures the path it names
 * or the phase fails.
 */
final class UserLaunch {

    /** Ranks of each job. */
    static final int RANKS = 8;
    /** The user the launcher runs as when the harness is root: nobody, as the process bundle's tests use. */
    static final long NOBODY = 65534;

    private static final String CREDENTIALS = "v2.credential.requests";
    private static final String MUNGE_ANSWERED = "v2.munge.answered";
    /** The line the launcher has MUNGE carry, of the same length. */
    private static final byte[] REQUEST_LINE = ("mpiproxy-credential-request-1 0123456789abcdef 0000000000000000"
            + " fedcba9876543210").getBytes(StandardCharsets.US_ASCII);

    /**
     * The launches of one row: their milliseconds, and those that failed (a launch that exits with
     * another status than 0 is counted here, not timed).
     */
    static final class Row {
        final Samples millis = new Samples();
        int failed;
        String firstFailure;

        /** @return launches measured and failed */
        int attempts() {
            return millis.size() + failed;
        }
    }

    /**
     * The figures of one run.
     *
     * @param keyHolder  {@code mpiproxy run} with the key file
     * @param forUser    the same with {@code --user}: the key holder makes a credential for the user, whose
     *                   ranks run as her; what a user's job costs the node, without asking for the credential
     * @param socket     as a user over the local socket; {@code null} with {@code socketWhy}
     * @param munge      as a user over MUNGE; {@code null} with {@code mungeWhy}
     * @param credential one MUNGE credential made and decoded; {@code null} with {@code mungeWhy}
     * @param user       whom the user rows ran as, in words
     * @param socketWhy  why the socket row was not measured, or {@code null}
     * @param mungeWhy   why the MUNGE rows were not measured, or {@code null}
     */
    record Figures(Row keyHolder, Row forUser, Row socket, Row munge, Samples credential, String user,
                   String socketWhy, String mungeWhy) {
    }

    private UserLaunch() {
    }

    /**
     * @param work   the harness's work directory (the key file goes there, private to the harness)
     * @param rounds rounds measured, after one of warm-up
     * @return the figures
     * @throws IllegalStateException when a launch fails or did not take the path of its row
     */
    static Figures measure(Path work, int rounds) throws IOException, InterruptedException {
        Path jar = MpichPrograms.cliJar();
        if (jar == null || !Files.isRegularFile(MpichPrograms.SCRIPT)) {
            throw new IllegalStateException("the launcher's jar cli/target/cli-*.jar or " + MpichPrograms.SCRIPT
                    + " is missing");
        }
        // what the user reads must be hers to read: programs, node map, socket in a directory open to all
        Path shared = Files.createTempDirectory("mpiproxy-user-");
        String mungeWhy = MungeDaemon.start();
        try {
            Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxr-xr-x"));
            Path programs = Files.createDirectories(shared.resolve("programs"));
            Files.copy(Path.of("/bin/true"), programs.resolve("true"), StandardCopyOption.REPLACE_EXISTING);
            Path key = V2Benchmarks.keyFile(Files.createTempDirectory(work, "key-"));
            try (ProxyFixture p = new ProxyFixture(programs, work, Duration.ofSeconds(5), ProxyFixture.RING_CAPACITY,
                    new EmbeddedProxy.V2(key, 1448))) {
                Path nodeMap = shared.resolve("nodes");
                Files.writeString(nodeMap, "127.0.0.1 127.0.0.1:" + p.address.getPort() + "\n");
                Path socket = shared.resolve("run").resolve("proxy.sock");
                Closeable local = null;
                String socketWhy = null;
                try {
                    local = EmbeddedProxy.localSocket(p.v2, socket, work.resolve("user-proxy"));
                } catch (IOException e) {
                    socketWhy = "the proxy's local socket did not open: " + e.getMessage();
                }
                try {
                    return rounds(p, key, nodeMap, socket, shared.resolve("none.sock"), jar, rounds, socketWhy,
                            mungeWhy, work);
                } finally {
                    if (local != null) {
                        local.close();
                    }
                }
            }
        } finally {
            MungeDaemon.stop();
            delete(shared);
        }
    }

    private static Figures rounds(ProxyFixture p, Path key, Path nodeMap, Path socket, Path noSocket, Path jar,
                                  int rounds, String socketWhy, String mungeWhy, Path work)
            throws IOException, InterruptedException {
        long[] self = {id("uid"), id("gid")};
        boolean root = self[0] == 0;
        if (root && !Files.isExecutable(Path.of("/usr/bin/setpriv")) && !Files.isExecutable(Path.of("/bin/setpriv"))) {
            throw new IllegalStateException("the harness runs as root and setpriv is missing: no user to launch as");
        }
        List<String> as = root ? List.of("setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups")
                : List.of();
        long[] ids = root ? new long[] {NOBODY, NOBODY} : self;
        String user = root ? "uid " + NOBODY + ", by setpriv from root"
                : "the harness's own uid " + self[0] + " without the key file: the harness is not root, so there is no"
                + " other user to run as";
        Map<String, String> env = Map.of("JAVA_HOME", System.getProperty("java.home"),
                "MPIPROXY_CLI_JAR", jar.toAbsolutePath().toString());
        List<String> holder = MpichPrograms.ours(key, nodeMap).command(RANKS, Path.of("/bin/true"));
        List<String> forUser = new ArrayList<>(holder);
        forUser.addAll(forUser.indexOf("run") + 1, List.of("--user", ids[0] + ":" + ids[1]));
        List<String> asUser = new ArrayList<>(as);
        asUser.addAll(List.of("sh", MpichPrograms.SCRIPT.toAbsolutePath().toString(), "run", "--node-map",
                nodeMap.toString(), "--hosts", "127.0.0.1:" + RANKS, "-n", Integer.toString(RANKS), "/bin/true"));
        Row keyHolder = new Row();
        Row holderForUser = new Row();
        Row viaSocket = socketWhy == null ? new Row() : null;
        Row viaMunge = mungeWhy == null ? new Row() : null;
        Samples credential = mungeWhy == null ? new Samples() : null;
        for (int r = 0; r < rounds + 1; r++) {
            boolean warm = r > 0;
            // interleaved, the order turned each round so that no row always follows the same one
            for (int k = 0; k < 5; k++) {
                int row = (r + k) % 5;
                if (row == 0) {
                    launch(p, holder, env, work, false, false, warm ? keyHolder : null);
                } else if (row == 1) {
                    launch(p, forUser, env, work, true, false, warm ? holderForUser : null);
                } else if (row == 2 && viaSocket != null) {
                    launch(p, asUser, user(env, socket), work, true, false, warm ? viaSocket : null);
                } else if (row == 3 && viaMunge != null) {
                    launch(p, asUser, user(env, noSocket), work, true, true, warm ? viaMunge : null);
                } else if (row == 4 && credential != null) {
                    double ms = mungeCredential();
                    if (warm) {
                        credential.add(ms);
                    }
                }
            }
            if (warm) {
                System.out.printf(Locale.ROOT, "   round %d: key holder %s (--user %s), socket %s, MUNGE %s,"
                        + " one credential %s%n", r, text(keyHolder), text(holderForUser), text(viaSocket),
                        text(viaMunge), credential == null ? "-" : String.format(Locale.ROOT, "%.1f ms",
                        last(credential)));
            }
        }
        return new Figures(keyHolder, holderForUser, viaSocket, viaMunge, credential, user, socketWhy,
                mungeWhy == null ? null : "no munged (" + mungeWhy + ")");
    }

    /** @return this process's {@code uid} or {@code gid} */
    private static long id(String which) throws IOException {
        return ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:" + which)).longValue();
    }

    /** @return the environment of a user: no key file, the socket to ask */
    private static Map<String, String> user(Map<String, String> env, Path socket) {
        Map<String, String> m = new java.util.HashMap<>(env);
        m.put("MPIPROXY_KEY_FILE", "");
        m.put("MPIPROXY_SOCKET", socket.toString());
        return m;
    }

    /**
     * Runs one launch and checks, by the proxy's counters, that it took its row's path.
     *
     * @param presented whether it must have presented a credential (a job key) or not (the cluster key)
     * @param vouched   whether MUNGE must have vouched for it
     * @param into      where its time or failure goes; {@code null} for a warm-up
     * @throws IllegalStateException when it took another path than its row's
     */
    private static void launch(ProxyFixture p, List<String> command, Map<String, String> env, Path work,
                               boolean presented, boolean vouched, Row into)
            throws IOException, InterruptedException {
        Map<String, Long> before = p.proxy.counters();
        double ms;
        try {
            ms = MpichPrograms.run(command, env, work).millis();
        } catch (IllegalStateException e) {
            System.out.println("   launch failed: " + e.getMessage());
            if (into != null) {
                into.failed++;
                if (into.firstFailure == null) {
                    // its status and the launcher's first line
                    String prefix = String.join(" ", command) + " exited with ";
                    String why = e.getMessage().startsWith(prefix)
                            ? "exit status " + e.getMessage().substring(prefix.length()) : e.getMessage();
                    into.firstFailure = why.split(" / ")[0];
                }
            }
            return;
        }
        Map<String, Long> after = p.proxy.counters();
        long credentials = delta(before, after, CREDENTIALS);
        long munge = delta(before, after, MUNGE_ANSWERED);
        if ((credentials > 0) != presented || (munge > 0) != vouched) {
            throw new IllegalStateException("a launch took another path than its row's: " + credentials
                    + " credentials presented and " + munge + " MUNGE requests answered: " + String.join(" ", command));
        }
        if (into != null) {
            into.millis.add(ms);
        }
    }

    private static long delta(Map<String, Long> before, Map<String, Long> after, String name) {
        return after.getOrDefault(name, 0L) - before.getOrDefault(name, 0L);
    }

    /**
     * One MUNGE credential as the launcher has it made and decoded: {@code munge} with the request
     * line on its input, then {@code unmunge -m /dev/null} with the credential.
     *
     * @return milliseconds of both
     */
    static double mungeCredential() throws IOException, InterruptedException {
        long t0 = System.nanoTime();
        byte[] credential = pipe(List.of("munge"), REQUEST_LINE);
        byte[] line = pipe(List.of("unmunge", "-m", "/dev/null"), credential);
        double ms = (System.nanoTime() - t0) / 1e6;
        if (!java.util.Arrays.equals(line, REQUEST_LINE)) {
            throw new IllegalStateException("unmunge gave back another payload than munge was given");
        }
        return ms;
    }

    private static byte[] pipe(List<String> command, byte[] input) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try (OutputStream in = p.getOutputStream()) {
            in.write(input);
        }
        byte[] out;
        try (InputStream stdout = p.getInputStream()) {
            out = stdout.readAllBytes();
        }
        if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IllegalStateException(String.join(" ", command) + " failed");
        }
        return out;
    }

    private static double last(Samples s) {
        return s.values().get(s.size() - 1);
    }

    private static String text(Row row) {
        return row == null ? "-" : row.millis.size() == 0 ? "failed"
                : String.format(Locale.ROOT, "%.0f ms", last(row.millis)) + (row.failed > 0 ? " (" + row.failed
                + " failed)" : "");
    }

    private static void delete(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(f);
            }
        }
    }
}
