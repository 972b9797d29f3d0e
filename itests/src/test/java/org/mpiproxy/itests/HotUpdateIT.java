package org.mpiproxy.itests;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.Before;
import org.junit.Test;
import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.ProxyStatus;
import org.osgi.framework.Bundle;
import org.osgi.framework.Constants;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.wiring.FrameworkWiring;

/**
 * {@code bundle:update} of the UDP transport, both launchers, the channel manager, the proxy
 * itself, the process library, the protocol and API bundles, the MPI library and the shell
 * commands while a v1 job streams two megabytes of prime flags to its host: the job stays (the
 * proxy's new revision takes it over), and the host receives every element exactly once, in
 * order.
 */
public class HotUpdateIT extends MpiProxyTestSupport {

    /** mpiprime's range; with two ranks (host and one rank) the rank computes about N/2 flags. */
    private static final int N = 4_000_000;
    private static final int WORLD = 2;
    /** Silence after which a RECV is considered lost (it may have reached a socket being replaced). */
    private static final int SILENCE_MILLIS = 1000;
    /** The hand-over window of the test that stops the proxy: long enough to look at the waiting job in it. */
    private static final int HANDOVER_SECONDS = 10;


    /** The commands register a moment after the bundles start: wait for every one used here. */
    @Before
    public void awaitCommands() {
        for (String command : List.of("bundle:update", "bundle:stop", "bundle:start", "config:property-set", "mpi:jobs")) {
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
    public void shouldKeepAStreamingJobWhileItsBundlesAreUpdated() throws Exception {
        ProxyStatus status = awaitService(ProxyStatus.class, null);
        long proxyServiceId = serviceId(ProxyStatus.class);
        int rounded = N % WORLD != 0 ? N + WORLD - N % WORLD : N;
        int root = (int) Math.sqrt(rounded);
        int per = (rounded - root) / WORLD;
        byte[] expected = PrimeStream.primeFlags(root + per, per);

        List<String> updated = new ArrayList<>();
        try (FreeNosHost host = new FreeNosHost(udpPort(), SILENCE_MILLIS)) {
            // the first spawn of a fresh container may take over a second on a loaded machine
            host.timeout((int) TIMEOUT.toMillis());
            assertEquals(0, host.exec(1, 0, WORLD, "mpiprime " + N).result);
            host.timeout(SILENCE_MILLIS);
            String owner = "127.0.0.1:" + host.localPort();
            long jobId = status.jobs().stream().filter(j -> owner.equals(j.owner())).findFirst()
                    .map(JobInfo::jobId).orElseThrow(() -> new AssertionError("no job of " + owner));
            Path jobDirectory = jobDirectory(jobId);

            PrimeStream stream = new PrimeStream(host, per, TIMEOUT);
            stream.receive(per / 5);
            update("org.mpiproxy.transport.udp", updated);
            awaitService(DatagramTransport.class, null);
            stream.receive(2 * per / 5);
            update("org.mpiproxy.launcher.local", updated);
            update("org.mpiproxy.launcher.core", updated);
            stream.receive(3 * per / 5);
            update("org.mpiproxy.channel.shm", updated);
            stream.receive(4 * per / 5);
            // the proxy itself: the new revision takes the job over, its queued RECVs included
            update("org.mpiproxy.proxy", updated);
            stream.receive(9 * per / 10);
            // the libraries every bundle uses, and the bundles no job needs
            for (String library : List.of("org.mpiproxy.process", "org.mpiproxy.protocol", "org.mpiproxy.api",
                    "org.mpiproxy.mpi", "org.mpiproxy.shell")) {
                update(library, updated);
            }
            stream.receive(per);

            assertEquals("elements received", per, stream.received);
            assertArrayEquals("every flag exactly once, in order", expected, stream.bytes.toByteArray());
            assertTrue("the proxy was updated", proxyServiceId != serviceId(ProxyStatus.class));
            assertTrue("the job survived: " + status.jobs(),
                    awaitService(ProxyStatus.class, null).jobs().stream().anyMatch(j -> j.jobId() == jobId));

            // the rank's end is awaited, not raced: the reply may come late on a busy machine
            host.timeout((int) TIMEOUT.toMillis());
            FreeNosHost.Reply terminated = host.terminate(1, 0);
            assertEquals("TERMINATE " + terminated, 0, terminated.result);
            assertEquals("exit status", 0, terminated.datacount);
            assertFalse(jobDirectory + " removed by the updated channel manager", Files.exists(jobDirectory));
        }
        assertEquals(List.of("org.mpiproxy.transport.udp", "org.mpiproxy.launcher.local", "org.mpiproxy.launcher.core",
                "org.mpiproxy.channel.shm", "org.mpiproxy.proxy", "org.mpiproxy.process", "org.mpiproxy.protocol", "org.mpiproxy.api",
                "org.mpiproxy.mpi", "org.mpiproxy.shell"), updated);

        // the updated bundles serve new jobs
        try (FreeNosHost host = new FreeNosHost(udpPort(), (int) TIMEOUT.toMillis())) {
            assertEquals(0, host.exec(1, 1, 2, "mpiping").result);
            host.sendInts(1, 0xaabbccdd);
            assertEquals(0x12345678, host.recvInt(1));
            assertEquals(0, host.terminate(1, 1).result);
        }
    }

    /**
     * {@code bundle:stop} of the proxy under a running v1 job: the job waits {@code handover.seconds}
     * for a new revision (its rank alive, the hand-over MBean waiting), then the stopped revision
     * stops the rank; the next start of the proxy removes what the job left. The window is the
     * MBean's own {@code ExpiresAt}: the test looks at the waiting job before it, and sees the rank
     * end after it.
     */
    @Test
    public void shouldStopTheRanksOfAStoppedProxyAfterItsHandOverWindow() throws Exception {
        awaitService(ProxyStatus.class, null);
        Bundle proxy = bundle("org.mpiproxy.proxy");
        setConfiguration("org.mpiproxy.proxy", "handover.seconds", HANDOVER_SECONDS);
        // the new window reaches the proxy through Config Admin's events: its service shows it once it has it
        awaitCondition(() -> Integer.toString(HANDOVER_SECONDS).equals(
                String.valueOf(componentProperty("org.mpiproxy.proxy", "handover.seconds"))), TIMEOUT,
                () -> "the proxy has handover.seconds=" + componentProperty("org.mpiproxy.proxy", "handover.seconds"));
        try (FreeNosHost host = new FreeNosHost(udpPort(), (int) TIMEOUT.toMillis())) {
            assertEquals(0, host.exec(1, 0, 2, "mpiping").result);
            String owner = "127.0.0.1:" + host.localPort();
            JobInfo job = awaitService(ProxyStatus.class, null).jobs().stream().filter(j -> owner.equals(j.owner()))
                    .findFirst().orElseThrow(() -> new AssertionError("no job of " + owner));
            long pid = job.ranks().get(0).pid();
            Path jobDirectory = jobDirectory(job.jobId());

            Instant stopping = Instant.now();
            admin("bundle:stop " + proxy.getBundleId());
            Instant stopped = Instant.now();
            javax.management.ObjectName box = new javax.management.ObjectName("org.mpiproxy:type=HandOver");
            javax.management.MBeanServer jmx = java.lang.management.ManagementFactory.getPlatformMBeanServer();
            assertTrue("the stopped proxy left its job for a new revision: no " + box, jmx.isRegistered(box));
            Instant expiresAt = Instant.parse((String) jmx.getAttribute(box, "ExpiresAt"));
            boolean rankRuns = ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
            Object waiting = jmx.getAttribute(box, "Waiting");
            Instant looked = Instant.now();
            // the stopping revision left the job during bundle:stop, for the configured window
            assertFalse("the window ends " + HANDOVER_SECONDS + " s after the stop, not before: " + expiresAt,
                    expiresAt.isBefore(stopping.plusSeconds(HANDOVER_SECONDS)));
            assertFalse("the window ends " + HANDOVER_SECONDS + " s after the stop, not after: " + expiresAt,
                    expiresAt.isAfter(stopped.plusSeconds(HANDOVER_SECONDS)));
            assertTrue("the job was looked at within its window (" + looked + ", window ends " + expiresAt + ")",
                    looked.isBefore(expiresAt));
            assertTrue("the rank was stopped with the proxy", rankRuns);
            assertEquals("the job waits for a new revision", Boolean.TRUE, waiting);

            awaitCondition(() -> ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true), TIMEOUT,
                    () -> "rank " + pid + " still runs after the hand-over window");
            Instant gone = Instant.now();
            assertFalse("the rank was stopped at " + gone + ", before its window ended at " + expiresAt,
                    gone.isBefore(expiresAt));
            assertFalse("the expired hand-over is gone", jmx.isRegistered(box));
            assertTrue(jobDirectory + " is left for the next start's sweep", Files.exists(jobDirectory));

            admin("bundle:start " + proxy.getBundleId());
            awaitService(ProxyStatus.class, null);
            awaitCondition(() -> !Files.exists(jobDirectory), TIMEOUT,
                    () -> jobDirectory + " not removed by the next start");
            assertTrue("the next proxy did not take the stopped job over",
                    awaitService(ProxyStatus.class, null).jobs().stream().noneMatch(j -> j.jobId() == job.jobId()));
        } finally {
            if (proxy.getState() != Bundle.ACTIVE) {
                proxy.start();
            }
            setConfiguration("org.mpiproxy.proxy", "handover.seconds", 30);
        }
        // the proxy serves new jobs
        try (FreeNosHost host = new FreeNosHost(udpPort(), (int) TIMEOUT.toMillis())) {
            assertEquals(0, host.exec(1, 0, 2, "mpiping").result);
            host.sendInts(1, 0xaabbccdd);
            assertEquals(0x12345678, host.recvInt(1));
            assertEquals(0, host.terminate(1, 0).result);
        }
    }

    /**
     * Runs {@code bundle:update} as an operator would, then waits until the bundle is active again
     * and the framework has finished refreshing it.
     *
     * <p>{@code bundle:update} returns before the refresh it starts has run. While a refresh holds
     * the framework's global lock, starting an updated bundle fails with "Unable to acquire global
     * lock for resolve" (the framework gives up rather than risk a deadlock); an operator then
     * simply types the command again. This test does the same, at most a few times, after waiting
     * for every pending refresh.
     */
    private void update(String bsn, List<String> updated) throws Exception {
        Bundle bundle = bundle(bsn);
        long modified = bundle.getLastModified();
        for (int attempt = 1; ; attempt++) {
            awaitPendingRefreshes();
            try {
                admin("bundle:update " + bundle.getBundleId());
                break;
            } catch (Exception e) {
                if (attempt == 3 || !String.valueOf(e.getMessage()).contains("global lock")) {
                    throw e;
                }
            }
        }
        awaitCondition(() -> bundle.getState() == Bundle.ACTIVE && bundle.getLastModified() != modified, TIMEOUT,
                () -> bsn + " state " + stateName(bundle.getState()));
        awaitPendingRefreshes();
        updated.add(bsn);
    }

    /**
     * Refresh requests run one after the other on the framework's refresh thread: a refresh of
     * nothing, queued now, completes only after every refresh queued before it.
     */
    private void awaitPendingRefreshes() throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        FrameworkWiring wiring = bundleContext.getBundle(0).adapt(FrameworkWiring.class);
        wiring.refreshBundles(List.of(), event -> done.countDown());
        assertTrue("the framework's refresh queue drained", done.await(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
    }

    private long serviceId(Class<?> type) {
        awaitService(type, null);
        ServiceReference<?> ref = bundleContext.getServiceReference(type);
        return (Long) ref.getProperty(Constants.SERVICE_ID);
    }
}
