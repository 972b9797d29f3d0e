package org.mpiproxy.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.management.MBeanServer;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

import org.apache.karaf.shell.api.console.SessionFactory;
import org.junit.Before;
import org.junit.Test;
import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.api.ProxyStatus;
import org.mpiproxy.api.RankInfo;
import org.osgi.framework.ServiceReference;

/**
 * The operator's surface on the booted distribution: the mpi:* commands against real jobs,
 * a port change under a running job, the MBeans over Karaf's JMX connector, the health check.
 */
public class OperatorIT extends MpiProxyTestSupport {

    private static final int PING = 0xaabbccdd;
    private static final int PONG = 0x12345678;
    private static final int TIMEOUT_MILLIS = (int) TIMEOUT.toMillis();

    private JobInfo jobOwnedBy(FreeNosHost host) {
        String owner = "127.0.0.1:" + host.localPort();
        return jobs().stream().filter(j -> owner.equals(j.owner())).findFirst()
                .orElseThrow(() -> new AssertionError("no job owned by " + owner + " in " + jobs()));
    }

    private JobInfo job(long id) {
        return jobs().stream().filter(j -> j.jobId() == id).findFirst()
                .orElseThrow(() -> new AssertionError("no job " + Long.toHexString(id) + " in " + jobs()));
    }

    private static String hex(long id) {
        return String.format("%016x", id);
    }

    /** The commands register a moment after the bundles start: wait for every one used here. */
    @Before
    public void awaitCommands() {
        for (String command : List.of("mpi:jobs", "mpi:job", "mpi:channels", "mpi:counters", "mpi:health", "mpi:output", "mpi:stop",
                "mpi:exec", "config:property-set", "config:meta")) {
            awaitCondition(() -> runs(command + " --help"), TIMEOUT, () -> command + " not registered");
        }
    }

    private boolean runs(String command) {
        try {
            admin(command);
            return true;
        } catch (Exception e) {
            return false;
        }
    }

    @Test
    public void shouldGuardStopExecAndOutputWithTheShippedCommandAcl() throws Exception {
        SessionFactory sessions = awaitService(SessionFactory.class, null);
        String jobs = AdminConsole.execute(sessions, "mpi:jobs", TIMEOUT, "viewer");
        assertFalse("a viewer reads the jobs", jobs.isBlank());
        for (String guarded : List.of("mpi:stop 1", "mpi:exec mpiping", "mpi:output 1 1")) {
            try {
                AdminConsole.execute(sessions, guarded, TIMEOUT, "viewer");
                throw new AssertionError("a viewer ran '" + guarded + "'");
            } catch (Exception e) {
                assertTrue("refused by the ACL, not failed otherwise: " + e,
                        e instanceof SecurityException || String.valueOf(e.getMessage()).contains("not found"));
            }
        }
    }

    @Test
    public void shouldShowStopAndSignalARunningV1Job() throws Exception {
        awaitService(ProxyStatus.class, null);
        Path program = programsDirectory().resolve("sleeper-operator");
        Files.writeString(program, "#!/bin/sh\nexec sleep 120\n");
        Files.setPosixFilePermissions(program, PosixFilePermissions.fromString("rwxr-xr-x"));
        try (FreeNosHost host = new FreeNosHost(udpPort(), TIMEOUT_MILLIS)) {
            assertEquals(0, host.exec(1, 0, 2, "sleeper-operator").result);
            JobInfo job = jobOwnedBy(host);
            String id = hex(job.jobId());
            long pid = job.ranks().get(0).pid();

            String jobs = admin("mpi:jobs --no-format");
            assertTrue(jobs, jobs.contains(id));
            String detail = admin("mpi:job --no-format " + id);
            assertTrue(detail, detail.matches("(?s)\\s*1\\s+0\\s+sleeper-operator\\s+" + pid + "\\s+RUNNING\\s+-\\s+0\\s+0\\s+0\\s+0\\s+"
                    + "\\d+%\\s+\\d+%\\s*"));
            String channels = admin("mpi:channels --no-format");
            assertTrue(channels, channels.contains(id) && channels.contains("rank-1.chan"));
            String counters = admin("mpi:counters exec.");
            assertTrue(counters, counters.contains("exec.started"));

            String stop = admin("mpi:stop --signal KILL " + id + " 1");
            assertEquals("Job " + id + ": sent SIGKILL to rank 1.", stop.trim());
            awaitCondition(() -> job(job.jobId()).ranks().get(0).state() == RankInfo.State.EXITED, TIMEOUT,
                    () -> "rank 1 after SIGKILL: " + job(job.jobId()));
            assertEquals(128 + 9, job(job.jobId()).ranks().get(0).exitStatus());
            FreeNosHost.Reply terminated = host.terminate(1, 0);
            assertEquals("TERMINATE reports the signal", 128 + 9, terminated.datacount);
        } finally {
            Files.deleteIfExists(program);
        }
    }

    @Test
    public void shouldExecFromTheConsoleShowOutputAndStopTheJob() throws Exception {
        awaitService(ProxyStatus.class, null);
        Path program = programsDirectory().resolve("hello-operator");
        Files.writeString(program, "#!/bin/sh\necho \"hello from rank $3 of $4: $5\"\necho \"warning $3\" >&2\n"
                + "exec sleep 120\n");
        Files.setPosixFilePermissions(program, PosixFilePermissions.fromString("rwxr-xr-x"));
        try {
            String exec = admin("mpi:exec --cores 0,0 --no-format hello-operator smoke");
            Matcher m = Pattern.compile("Job ([0-9a-f]{16}) started").matcher(exec);
            assertTrue(exec, m.find());
            String id = m.group(1);
            long jobId = Long.parseUnsignedLong(id, 16);
            assertEquals(exec, 2, job(jobId).ranks().size());

            awaitCondition(() -> output("mpi:output " + id + " 2").contains("hello from rank 2 of 3: smoke"),
                    TIMEOUT, () -> "output of rank 2: " + output("mpi:output " + id + " 2"));
            // each rank is its own process: rank 1 may write its stderr line after rank 2's stdout
            awaitCondition(() -> !output("mpi:output --stderr " + id + " 1").isEmpty(), TIMEOUT,
                    () -> "stderr of rank 1 is still empty");
            assertEquals("warning 1\n", output("mpi:output --stderr " + id + " 1"));
            assertEquals("hello from rank 1 of 3: smoke\n", output("mpi:output -n 1 " + id + " 1"));

            String stop = admin("mpi:stop " + id);
            assertEquals("Job " + id + ": sent SIGTERM to ranks 1, 2.", stop.trim());
            Path jobDirectory = jobDirectory(jobId);
            awaitCondition(() -> !Files.exists(jobDirectory), TIMEOUT,
                    () -> "the console job was not terminated: " + job(jobId));
            for (RankInfo rank : job(jobId).ranks()) {
                assertEquals("rank " + rank.rankId(), 128 + 15, rank.exitStatus());
            }
            String followed = admin("mpi:output --follow " + id + " 1");
            assertEquals("an ended rank's output is printed once", "hello from rank 1 of 3: smoke\n", followed);
        } finally {
            Files.deleteIfExists(program);
        }
    }

    private String output(String command) {
        try {
            return admin(command);
        } catch (Exception e) {
            return e.toString();
        }
    }

    @Test
    public void shouldMoveToANewPortWhileAJobRuns() throws Exception {
        DatagramTransport transport = awaitService(DatagramTransport.class, null);
        int newPort = Ports.freeUdpPort("127.0.0.1");
        try (FreeNosHost host = new FreeNosHost(udpPort(), TIMEOUT_MILLIS)) {
            assertEquals(0, host.exec(1, 0, 2, "mpiping").result);
            JobInfo job = jobOwnedBy(host);

            setConfiguration("org.mpiproxy.transport.udp", "port", newPort);
            awaitCondition(() -> transport.localAddress().getPort() == newPort, TIMEOUT,
                    () -> "transport still on " + transport.localAddress());
            host.proxyPort(newPort);

            host.sendInts(1, PING);
            assertEquals("the job continues on the new port", PONG, host.recvInt(1));
            assertEquals(job.jobId(), jobOwnedBy(host).jobId());
            FreeNosHost.Reply terminated = host.terminate(1, 0);
            assertEquals(0, terminated.result);
            assertEquals(0, terminated.datacount);

            setConfiguration("org.mpiproxy.transport.udp", "port", 70000);
            assertEquals("a bad port leaves the socket where it was", newPort, transport.localAddress().getPort());
        } finally {
            setConfiguration("org.mpiproxy.transport.udp", "port", udpPort());
            awaitCondition(() -> transport.localAddress().getPort() == udpPort(), TIMEOUT,
                    () -> "transport not back on " + udpPort() + ": " + transport.localAddress());
        }
    }

    @Test
    public void shouldServeMBeansOverKarafJmxWhoseCountersMove() throws Exception {
        awaitService(ProxyStatus.class, null);
        MBeanServer local = ManagementFactory.getPlatformMBeanServer();
        ObjectName proxy = new ObjectName("org.mpiproxy:type=Proxy");
        ObjectName transport = new ObjectName("org.mpiproxy:type=Transport");
        awaitCondition(() -> local.isRegistered(proxy) && local.isRegistered(transport), TIMEOUT,
                () -> "MBeans not registered");

        JMXServiceURL url = new JMXServiceURL("service:jmx:rmi:///jndi/rmi://127.0.0.1:" + rmiRegistryPort()
                + "/karaf-root");
        try (JMXConnector connector = JMXConnectorFactory.connect(url,
                Map.of(JMXConnector.CREDENTIALS, new String[] {"karaf", operatorPassword()}))) {
            MBeanServerConnection jmx = connector.getMBeanServerConnection();
            long datagramsIn = (Long) jmx.getAttribute(proxy, "DatagramsIn");
            long invalid = (Long) jmx.getAttribute(proxy, "InvalidDatagrams");
            long transportIn = (Long) jmx.getAttribute(transport, "DatagramsIn");
            try (FreeNosHost host = new FreeNosHost(udpPort(), 2000)) {
                host.sendRaw(new byte[] {1, 2, 3});
                host.sendRaw(new byte[] {1, 2, 3, 4});
            }
            awaitCondition(() -> attribute(jmx, proxy, "InvalidDatagrams") == invalid + 2, TIMEOUT,
                    () -> "InvalidDatagrams " + attribute(jmx, proxy, "InvalidDatagrams") + ", was " + invalid);
            assertEquals(datagramsIn + 2, attribute(jmx, proxy, "DatagramsIn"));
            assertTrue(attribute(jmx, transport, "DatagramsIn") >= transportIn + 2);
            assertEquals("OK", jmx.getAttribute(proxy, "Health"));
            assertTrue(jmx.getAttribute(proxy, "Jobs") instanceof javax.management.openmbean.CompositeData[]);
            assertTrue(attribute(jmx, proxy, "Retransmissions") >= 0);
            assertJobMBeanFollowsTheJob(jmx);
        }
    }

    /** A job's own MBean appears while it runs, shows its ranks and bytes, and goes when it ends. */
    private void assertJobMBeanFollowsTheJob(MBeanServerConnection jmx) throws Exception {
        Path program = programsDirectory().resolve("sleeper-jmx");
        Files.writeString(program, "#!/bin/sh\nexec sleep 120\n");
        Files.setPosixFilePermissions(program, PosixFilePermissions.fromString("rwxr-xr-x"));
        try (FreeNosHost host = new FreeNosHost(udpPort(), TIMEOUT_MILLIS)) {
            assertEquals(0, host.exec(1, 0, 2, "sleeper-jmx").result);
            long jobId = jobOwnedBy(host).jobId();
            ObjectName name = new ObjectName("org.mpiproxy:type=Job,id=" + hex(jobId));
            awaitCondition(() -> registered(jmx, name), TIMEOUT, () -> name + " not registered");
            assertEquals(hex(jobId), jmx.getAttribute(name, "JobId"));
            assertEquals("v1", jmx.getAttribute(name, "Protocol"));
            assertEquals(1, ((int[]) jmx.getAttribute(name, "RankIds"))[0]);
            assertEquals("RUNNING", ((String[]) jmx.getAttribute(name, "States"))[0]);
            assertEquals(-1, ((int[]) jmx.getAttribute(name, "ExitStatuses"))[0]);
            host.sendInts(1, PING);
            awaitCondition(() -> attribute(jmx, name, "BytesIn") == 4, TIMEOUT,
                    () -> "BytesIn " + attribute(jmx, name, "BytesIn"));

            admin("mpi:stop --signal KILL " + hex(jobId) + " 1");
            awaitCondition(() -> !registered(jmx, name), TIMEOUT, () -> name + " still registered after the job ended");
            assertEquals(128 + 9, host.terminate(1, 0).datacount);
        } finally {
            Files.deleteIfExists(program);
        }
    }

    private static boolean registered(MBeanServerConnection jmx, ObjectName name) {
        try {
            return jmx.isRegistered(name);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static long attribute(MBeanServerConnection jmx, ObjectName name, String attribute) {
        try {
            return (Long) jmx.getAttribute(name, attribute);
        } catch (Exception e) {
            throw new AssertionError("cannot read " + name + " " + attribute, e);
        }
    }

    private static int rmiRegistryPort() {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(karafHome().resolve("etc/org.apache.karaf.management.cfg"))) {
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Integer.parseInt(p.getProperty("rmiRegistryPort").trim());
    }

    @Test
    public void shouldKeepTheLauncherServingWhenItsProgramDirectoryIsBadAndMoveItInPlace() throws Exception {
        awaitService(ProxyStatus.class, null);
        String local = "(" + ProcessLauncher.KIND + "=" + ProcessLauncher.KIND_LOCAL + ")";
        ProcessLauncher launcher = awaitService(ProcessLauncher.class, local);
        ServiceReference<ProcessLauncher> reference = bundleContext.getServiceReferences(ProcessLauncher.class, local)
                .iterator().next();
        Path programs = programsDirectory().normalize();
        Path moved = karafHome().resolve("programs-moved").normalize();
        String bad = "relative/programs";
        try (FreeNosHost running = new FreeNosHost(udpPort(), TIMEOUT_MILLIS)) {
            assertEquals("a job that runs through the changes", 0, running.exec(1, 0, 2, "mpiping").result);

            setConfiguration("org.mpiproxy.launcher.local", "program.directory", bad);
            awaitCondition(() -> bad.equals(reference.getProperty("program.directory")), TIMEOUT,
                    () -> "the launcher service did not get the new configuration in place: "
                            + reference.getProperty("program.directory"));
            assertTrue("the same launcher service, not deactivated", reference.getBundle() != null);
            assertEquals("the last good program directory stays", programs, launcher.programDirectory());
            try (FreeNosHost host = new FreeNosHost(udpPort(), TIMEOUT_MILLIS)) {
                assertEquals("a job still starts", 0, host.exec(1, 0, 2, "mpiping").result);
                host.sendInts(1, PING);
                assertEquals(PONG, host.recvInt(1));
                assertEquals(0, host.terminate(1, 0).result);
            }

            Files.createDirectories(moved);
            Files.copy(programs.resolve("mpiping"), moved.resolve("mpiping-moved"),
                    java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
            setConfiguration("org.mpiproxy.launcher.local", "program.directory", moved);
            awaitCondition(() -> moved.equals(launcher.programDirectory()), TIMEOUT,
                    () -> "program directory in force: " + launcher.programDirectory());
            assertTrue("moved in place, not restarted", reference.getBundle() != null);
            try (FreeNosHost host = new FreeNosHost(udpPort(), TIMEOUT_MILLIS)) {
                assertEquals("a program of the new directory starts", 0,
                        host.exec(1, 0, 2, "mpiping-moved").result);
                host.sendInts(1, PING);
                assertEquals(PONG, host.recvInt(1));
                assertEquals(0, host.terminate(1, 0).result);
            }

            running.sendInts(1, PING);
            assertEquals("the job started before both changes still runs", PONG, running.recvInt(1));
            assertEquals(0, running.terminate(1, 0).result);
        } finally {
            setConfiguration("org.mpiproxy.launcher.local", "program.directory", programs.toString());
            awaitCondition(() -> programs.equals(launcher.programDirectory()), TIMEOUT,
                    () -> "program.directory not restored: " + launcher.programDirectory());
            Files.deleteIfExists(moved.resolve("mpiping-moved"));
            Files.deleteIfExists(moved);
        }
    }

    @Test
    public void shouldReportABadProgramDirectoryAndDescribeTheConfiguration() throws Exception {
        awaitService(ProxyStatus.class, null);
        String healthy = admin("mpi:health --no-format");
        assertTrue(healthy, healthy.contains("Health: OK"));

        Path missing = karafHome().resolve("no-such-programs");
        try {
            setConfiguration("org.mpiproxy.launcher.local", "program.directory", missing.toString());
            awaitCondition(() -> output("mpi:health --no-format").contains(missing + " is not a directory"), TIMEOUT,
                    () -> output("mpi:health --no-format"));
            String report = admin("mpi:health --no-format");
            assertTrue(report, report.contains("programs.local\tCRITICAL") || report.matches("(?s).*programs\\.local\\s+"
                    + "CRITICAL.*"));
            assertTrue(report, report.trim().endsWith("Health: CRITICAL"));
            assertEquals("CRITICAL", ManagementFactory.getPlatformMBeanServer()
                    .getAttribute(new ObjectName("org.mpiproxy:type=Proxy"), "Health"));
        } finally {
            setConfiguration("org.mpiproxy.launcher.local", "program.directory", programsDirectory().toString());
        }
        awaitCondition(() -> output("mpi:health --no-format").contains("Health: OK"), TIMEOUT,
                () -> output("mpi:health --no-format"));

        String meta = admin("config:meta org.mpiproxy.health");
        assertTrue(meta, meta.contains("shm.min.free.bytes"));
        String transportMeta = admin("config:meta org.mpiproxy.transport.udp");
        assertTrue(transportMeta, transportMeta.contains("port"));
        assertFalse(Files.exists(missing));
    }
}
