package org.mpiproxy.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.Before;
import org.junit.Test;
import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.ProxyStatus;
import org.mpiproxy.api.RankInfo;
import org.osgi.framework.ServiceReference;

/**
 * What a newcomer, an operator and a job owner meet in their first hour, on the booted
 * distribution: a mistyped configuration value changed in place is one line in {@code karaf.log}
 * and the node keeps serving; {@code mpi:health} names the
 * generated key and counts the shipped programs; an LZ4 image is refused as a program; the
 * output of old finished jobs is deleted by the shipped retention keys.
 */
public class FirstHourIT extends MpiProxyTestSupport {

    private static final int PING = 0xaabbccdd;
    private static final int PONG = 0x12345678;
    private static final int TIMEOUT_MILLIS = (int) TIMEOUT.toMillis();
    private static final String PROXY = "org.mpiproxy.proxy";
    private static final String UDP = "org.mpiproxy.transport.udp";
    private static final String KEEPING = "; keeping the last good configuration";

    /** The programs the distribution ships, each with its LZ4 image. */
    private static final List<String> SHIPPED = List.of("mpiecho", "mpiping", "mpiprime");
    /** Shipped programs without a core image: mpijava finds mpi.jar beside itself. */
    private static final List<String> SHIPPED_LOCAL_ONLY = List.of("mpijava");


    private String quietly(String command) {
        try {
            return admin(command);
        } catch (Exception e) {
            return e.toString();
        }
    }

    private void set(String pid, String key, Object value) throws Exception {
        setConfiguration(pid, key, value);
        // the change reaches the component asynchronously; its service shows it once the component
        // has been given it (good or bad: the component decides what it keeps)
        awaitCondition(() -> String.valueOf(value).equals(String.valueOf(componentProperty(pid, key))), TIMEOUT,
                () -> pid + " " + key + "=" + value + " not delivered to the component: its service has "
                        + componentProperty(pid, key) + "; the component:\n" + quietly("scr:info " + pid)
                        + "\nthe configuration:\n" + quietly("config:list '(service.pid=" + pid + ")'")
                        + "\netc/" + pid + ".cfg:\n" + readQuietly(karafHome().resolve("etc").resolve(pid + ".cfg"))
                        + "\nconfiguration threads:\n" + configurationThreads());
        // and Karaf has written it to etc/<pid>.cfg: a change made before that write can be undone
        // by the file's older content when Karaf reads the file back
        Pattern line = Pattern.compile("(?m)^\\s*" + Pattern.quote(key) + "\\s*=\\s*"
                + Pattern.quote(String.valueOf(value)) + "\\s*$");
        Path cfg = karafHome().resolve("etc").resolve(pid + ".cfg");
        awaitCondition(() -> line.matcher(readQuietly(cfg)).find(), TIMEOUT,
                () -> cfg + " does not say " + key + " = " + value + ":\n" + readQuietly(cfg));
        // Karaf may write the file more than once for one change; a next change whose write overlaps
        // those writes can leave the file mixed from both (seen: a shorter write over the start of a
        // longer one), which Karaf then reads back as the configuration. Wait until it is written.
        awaitStable(cfg);
    }

    /** Waits until the file has not changed for a second. */
    private static void awaitStable(Path file) throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        String last = readQuietly(file);
        long since = System.nanoTime();
        while (System.nanoTime() < deadline && System.nanoTime() - since < 1_000_000_000L) {
            Thread.sleep(50);
            String now = readQuietly(file);
            if (!now.equals(last)) {
                last = now;
                since = System.nanoTime();
            }
        }
    }

    private static String readQuietly(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            return e.toString();
        }
    }

    /** @return the stacks of the threads that deliver configurations: where a delivery waits */
    private static String configurationThreads() {
        StringBuilder b = new StringBuilder();
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            String name = e.getKey().getName();
            if (name.startsWith("CM ") || name.startsWith("SCR") || name.startsWith("fileinstall")
                    || name.startsWith("mpiproxy")) {
                b.append(name).append(' ').append(e.getKey().getState()).append('\n');
                for (StackTraceElement frame : e.getValue()) {
                    b.append("    ").append(frame).append('\n');
                }
            }
        }
        return b.toString();
    }

    /** The commands register a moment after the bundles start: wait for every one used here. */
    @Before
    public void awaitCommands() {
        for (String command : List.of("mpi:jobs", "mpi:health", "mpi:exec", "mpi:stop", "config:property-set")) {
            awaitCondition(() -> !quietly(command + " --help").startsWith("org.apache"), TIMEOUT,
                    () -> command + " not registered: " + quietly(command + " --help"));
        }
    }

    // ---------------------------------------------------------------- karaf.log

    private static Path karafLog() {
        return Paths.get(System.getProperty("karaf.data"), "log", "karaf.log");
    }

    /** @return where karaf.log ends now: read what follows with {@link #logSince} */
    private static long logMark() throws IOException {
        return Files.size(karafLog());
    }

    /** @return what karaf.log got after {@code mark} */
    private static String logSince(long mark) {
        try (InputStream in = Files.newInputStream(karafLog())) {
            in.skipNBytes(Math.min(mark, Files.size(karafLog())));
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int occurrences(String text, String line) {
        int n = 0;
        for (int i = text.indexOf(line); i >= 0; i = text.indexOf(line, i + line.length())) {
            n++;
        }
        return n;
    }

    /** Waits for {@code line} in the log after {@code mark}, then checks it is there once with no stack trace. */
    private static void assertOneLineNoStackTrace(long mark, String line) {
        awaitCondition(() -> logSince(mark).contains(line), TIMEOUT,
                () -> "no '" + line + "' in karaf.log; it got:\n" + logSince(mark));
        String log = logSince(mark);
        assertEquals("one line for one bad value:\n" + log, 1, occurrences(log, line));
        assertNoStackTrace(log);
    }

    private static void assertNoStackTrace(String log) {
        assertFalse("a stack trace:\n" + log, log.contains("NumberFormatException"));
        assertFalse("a stack trace:\n" + log, log.contains("\tat "));
        assertFalse("a stack trace:\n" + log, log.contains("Caused by"));
    }

    // ---------------------------------------------------------------- 1. configuration typing

    @Test
    public void shouldLogOneLinePerBadValueKeepServingAndApplyTheGoodValue() throws Exception {
        awaitService(ProxyStatus.class, null);
        Path program = programsDirectory().resolve("fail-first");
        // rank 1 fails at once; the others sleep for the seconds given, unless the job is aborted
        Files.writeString(program, "#!/bin/sh\nif [ \"$3\" = 1 ]; then exit 3; fi\nexec sleep \"$5\"\n");
        Files.setPosixFilePermissions(program, PosixFilePermissions.fromString("rwxr-xr-x"));
        try {
            long mark = logMark();
            set(PROXY, "stop.grace.seconds", "ten");
            assertOneLineNoStackTrace(mark, PROXY + ": stop.grace.seconds=ten is not a whole number" + KEEPING);
            assertServing("stop.grace.seconds=ten");
            set(PROXY, "stop.grace.seconds", 5);

            mark = logMark();
            set(PROXY, "abort.on.failure", "yes");
            assertOneLineNoStackTrace(mark, PROXY + ": abort.on.failure=yes is not true or false" + KEEPING);
            assertServing("abort.on.failure=yes");
            assertEquals("abort.on.failure=true stays in force: the sleeping rank is stopped",
                    128 + 15, exitOfSecondRank(60));

            mark = logMark();
            set(PROXY, "abort.on.failure", false);
            assertEquals("abort.on.failure=false is applied: the other rank runs to its end",
                    0, exitOfSecondRank(3));
            String log = logSince(mark);
            assertFalse("a good value is no problem:\n" + log, log.contains(KEEPING));
            assertNoStackTrace(log);
        } finally {
            set(PROXY, "stop.grace.seconds", 10);
            set(PROXY, "abort.on.failure", true);
            Files.deleteIfExists(program);
        }
    }

    /** Runs fail-first on two ranks of the proxy's core and returns rank 2's exit status. */
    private int exitOfSecondRank(int sleepSeconds) throws Exception {
        String exec = admin("mpi:exec --cores 0,0 --no-format fail-first " + sleepSeconds);
        Matcher m = Pattern.compile("Job ([0-9a-f]{16}) started").matcher(exec);
        assertTrue(exec, m.find());
        long jobId = Long.parseUnsignedLong(m.group(1), 16);
        awaitCondition(() -> job(jobId).ranks().stream().allMatch(FirstHourIT::ended), TIMEOUT,
                () -> "job still running: " + job(jobId));
        JobInfo job = job(jobId);
        assertEquals(job.toString(), 3, job.ranks().get(0).exitStatus());
        return job.ranks().get(1).exitStatus();
    }

    private static boolean ended(RankInfo rank) {
        return rank.state() == RankInfo.State.EXITED || rank.state() == RankInfo.State.FAILED;
    }

    private JobInfo job(long id) {
        return jobs().stream().filter(j -> j.jobId() == id).findFirst()
                .orElseThrow(() -> new AssertionError("no job " + Long.toHexString(id) + " in " + jobs()));
    }

    /** A v1 job runs (EXEC, a ping answered, TERMINATE) and the health check is OK. */
    private void assertServing() throws Exception {
        assertServing(null);
    }

    /**
     * A v1 job runs (EXEC, a ping answered, TERMINATE), and the health check is OK but for the
     * refused value: its {@code config.<pid>} check is the only one not OK, a WARN (the node runs
     * on its last good configuration) naming it.
     *
     * @param refused the refused {@code key=value}, {@code null} when none is in force
     */
    private void assertServing(String refused) throws Exception {
        try (FreeNosHost host = new FreeNosHost(udpPort(), TIMEOUT_MILLIS)) {
            assertEquals("a job still starts", 0, host.exec(1, 0, 2, "mpiping").result);
            host.sendInts(1, PING);
            assertEquals(PONG, host.recvInt(1));
            assertEquals(0, host.terminate(1, 0).result);
        }
        String health = admin("mpi:health --no-format");
        if (refused == null) {
            assertTrue(health, health.trim().endsWith("Health: OK"));
            return;
        }
        assertTrue(health, health.trim().endsWith("Health: WARN"));
        List<String> notOk = health.lines().filter(l -> !l.startsWith("Health:"))
                .filter(l -> l.matches("\\S+\\s+(WARN|CRITICAL)\\s.*")).toList();
        assertEquals(health, 1, notOk.size());
        assertTrue(health, notOk.get(0).matches("config\\.\\S+\\s+WARN\\s.*") && notOk.get(0).contains(refused));
    }

    @Test
    public void shouldLogOneLinePerBadTransportValueAndKeepTheSocket() throws Exception {
        DatagramTransport transport = awaitService(DatagramTransport.class, null);
        ServiceReference<DatagramTransport> reference = bundleContext.getServiceReference(DatagramTransport.class);
        try {
            long mark = logMark();
            set(UDP, "receive.buffer.size", "4M");
            assertOneLineNoStackTrace(mark, UDP + ": receive.buffer.size=4M is not a whole number" + KEEPING);
            assertEquals("the socket stays where it was", udpPort(), transport.localAddress().getPort());
            assertTrue("the same transport, not deactivated", reference.getBundle() != null);
            assertServing("receive.buffer.size=4M");

            mark = logMark();
            set(UDP, "receive.buffer.size", 2097152);
            awaitCondition(() -> Integer.valueOf(2097152).toString().equals(
                    String.valueOf(reference.getProperty("receive.buffer.size"))), TIMEOUT,
                    () -> "the transport did not get the good value: " + reference.getProperty("receive.buffer.size"));
            String log = logSince(mark);
            assertFalse("a good value is no problem:\n" + log, log.contains(KEEPING));
            assertServing();
        } finally {
            set(UDP, "receive.buffer.size", 4194304);
        }
    }

    // ---------------------------------------------------------------- 2. health

    @Test
    public void shouldReportTheGeneratedKeyAndCountTheShippedPrograms() throws Exception {
        awaitService(ProxyStatus.class, null);
        Path key = Paths.get(System.getProperty("karaf.etc")).resolve("mpiproxy.key");
        awaitCondition(() -> Files.exists(key), TIMEOUT, () -> "no generated key " + key);
        for (String program : SHIPPED) {
            assertTrue(program, Files.isExecutable(programsDirectory().resolve(program)));
            assertTrue(program + ".lz4", Files.isRegularFile(programsDirectory().resolve(program + ".lz4")));
        }
        for (String program : SHIPPED_LOCAL_ONLY) {
            assertTrue(program, Files.isExecutable(programsDirectory().resolve(program)));
        }
        String health = admin("mpi:health --no-format");
        assertTrue(health, Pattern.compile("(?m)^v2\\.key\\s+OK\\s+" + Pattern.quote(key
                + " is readable by its owner only and holds a strong key") + "\\s*$").matcher(health).find());
        assertFalse(health, health.contains("no key"));
        assertTrue(health, Pattern.compile("(?m)^programs\\.local\\s+OK\\s+" + Pattern.quote(
                (SHIPPED.size() + SHIPPED_LOCAL_ONLY.size()) + " programs in " + programsDirectory().normalize())
                + "\\s*$").matcher(health).find());
        if (health.contains("programs.core")) {
            assertTrue(health, Pattern.compile("(?m)^programs\\.core\\s+OK\\s+" + Pattern.quote(SHIPPED.size()
                    + " program images in ")).matcher(health).find());
        }
        assertTrue(health, health.trim().endsWith("Health: OK"));
    }

    // ---------------------------------------------------------------- 3. an image is no program

    @Test
    public void shouldRefuseAnImageAsAProgramAndStartNothing() throws Exception {
        ProxyStatus status = awaitService(ProxyStatus.class, null);
        int jobs = jobs().size();
        Long created = status.counters().get("jobs.created");
        try {
            String output = admin("mpi:exec --no-format mpiping.lz4");
            fail("mpi:exec of an image ran: " + output);
        } catch (IllegalArgumentException e) {
            assertEquals("'mpiping.lz4' is the LZ4 image of program 'mpiping' for remote cores, not a program:"
                    + " name 'mpiping'", e.getMessage());
            assertFalse("one line", e.getMessage().contains("\n"));
        }
        assertEquals("no job: " + jobs(), jobs, jobs().size());
        assertEquals(created, awaitService(ProxyStatus.class, null).counters().get("jobs.created"));
    }

    // ---------------------------------------------------------------- 4. rank log retention

    @Test
    public void shouldShipTheRetentionKeysAndDeleteOldFinishedOutputWhenTheLimitsChange() throws Exception {
        awaitService(ProxyStatus.class, null);
        Properties shipped = new Properties();
        try (InputStream in = Files.newInputStream(karafHome().resolve("etc").resolve(PROXY + ".cfg"))) {
            shipped.load(in);
        }
        assertEquals("14", shipped.getProperty("log.retention.days"));
        assertEquals("512", shipped.getProperty("log.retention.megabytes"));

        Path logs = Paths.get(System.getProperty("karaf.data"), "mpiproxy", "logs");
        Instant now = Instant.now();
        Path old = jobLogs(logs, 0xa001, 100, now.minus(Duration.ofDays(30)));
        Path recent = jobLogs(logs, 0xa002, 100, now.minus(Duration.ofMinutes(5)));
        Path big = jobLogs(logs, 0xa003, 1536 * 1024, now.minus(Duration.ofHours(2)));
        Path medium = jobLogs(logs, 0xa004, 256 * 1024, now.minus(Duration.ofHours(1)));
        Path program = programsDirectory().resolve("sleeper-retention");
        Files.writeString(program, "#!/bin/sh\necho started\nexec sleep 120\n");
        Files.setPosixFilePermissions(program, PosixFilePermissions.fromString("rwxr-xr-x"));
        List<Path> made = new ArrayList<>(List.of(old, recent, big, medium));
        try {
            String exec = admin("mpi:exec --no-format sleeper-retention");
            Matcher m = Pattern.compile("Job ([0-9a-f]{16}) started").matcher(exec);
            assertTrue(exec, m.find());
            String id = m.group(1);
            Path running = logs.resolve("job-" + id);
            awaitCondition(() -> Files.exists(running.resolve("rank-1.out")), TIMEOUT, () -> "no " + running);
            age(running, now.minus(Duration.ofDays(30)));
            assertTrue("the shipped limits keep everything but the 30 days old output", Files.exists(big));

            set(PROXY, "log.retention.days", 1);
            awaitCondition(() -> !Files.exists(old), TIMEOUT, () -> old + " is still there");
            assertTrue("output of today stays", Files.exists(recent) && Files.exists(big) && Files.exists(medium));
            assertTrue("a running job's output stays, however old", Files.exists(running));

            set(PROXY, "log.retention.megabytes", 1);
            awaitCondition(() -> !Files.exists(big), TIMEOUT, () -> big + " is still there");
            assertTrue("under the limit once the oldest is gone", Files.exists(recent) && Files.exists(medium));
            assertTrue("a running job's output stays, however large the rest", Files.exists(running));

            admin("mpi:stop " + id);
            awaitCondition(() -> job(Long.parseUnsignedLong(id, 16)).ranks().stream().allMatch(FirstHourIT::ended),
                    TIMEOUT, () -> "the sleeper still runs");
        } finally {
            set(PROXY, "log.retention.days", 14);
            set(PROXY, "log.retention.megabytes", 512);
            for (Path dir : made) {
                deleteTree(dir);
            }
            Files.deleteIfExists(program);
        }
    }

    /** Makes the output directory of a finished job: rank-1.out of {@code bytes}, last written at {@code when}. */
    private static Path jobLogs(Path logs, long jobId, int bytes, Instant when) throws IOException {
        Path dir = logs.resolve(String.format("job-%016x", jobId));
        Files.createDirectories(dir);
        Files.write(dir.resolve("rank-1.out"), new byte[bytes]);
        age(dir, when);
        return dir;
    }

    private static void age(Path dir, Instant when) throws IOException {
        FileTime time = FileTime.from(when);
        try (var files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Files.setLastModifiedTime(f, time);
            }
        }
        Files.setLastModifiedTime(dir, time);
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Files.delete(f);
            }
        }
        Files.delete(dir);
    }
}
