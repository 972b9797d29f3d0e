package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import javax.management.MBeanServer;
import javax.management.MBeanServerFactory;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.openmbean.TabularData;

import org.junit.jupiter.api.Test;
import org.mpiproxy.api.HealthResult;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.ProxyControl;
import org.mpiproxy.api.ProxyStatus;
import org.mpiproxy.api.RankInfo;

class ProxyManagementTest {

    private final Map<String, Long> counters = new LinkedHashMap<>();

    private final ProxyStatus status = new ProxyStatus() {
        @Override
        public List<JobInfo> jobs() {
            return List.of(new JobInfo(0x2aL, "v1", "10.0.0.1:5", Instant.EPOCH, List.of(
                    new RankInfo(1, 2, "mpiping", 77, RankInfo.State.RUNNING, -1, 10, 20, 0, 0))));
        }

        @Override
        public Map<String, Long> counters() {
            return Map.copyOf(counters);
        }
    };

    private final ProxyControl control = new ProxyControl() {
        @Override
        public List<Integer> signal(long jobId, int rankId, String signal) {
            return List.of();
        }

        @Override
        public Path outputFile(long jobId, int rankId, boolean stderr) {
            return Path.of("x");
        }

        @Override
        public JobInfo exec(String program, List<String> args, List<Integer> cores) {
            return null;
        }

        @Override
        public List<String> programs() {
            return List.of();
        }

        @Override
        public List<HealthResult> health() {
            return List.of(new HealthResult("udp.listening", HealthResult.Status.OK, "listening"),
                    new HealthResult("programs.local", HealthResult.Status.CRITICAL, "/x is not a directory"));
        }
    };

    @Test
    void shouldExposeCountersJobsAndHealthAsOpenTypes() throws Exception {
        MBeanServer server = MBeanServerFactory.newMBeanServer();
        ObjectName name = new ObjectName(ProxyMXBean.OBJECT_NAME);
        counters.put("datagrams.in", 3L);
        counters.put("invalid.short", 1L);
        counters.put("invalid.op", 2L);
        counters.put("send.held", 4L);
        ProxyManagement management = new ProxyManagement(status, control, server);

        assertEquals(3L, server.getAttribute(name, "DatagramsIn"));
        assertEquals(3L, server.getAttribute(name, "InvalidDatagrams"));
        assertEquals(4L, server.getAttribute(name, "RingsFull"));
        counters.put("datagrams.in", 9L);
        assertEquals(9L, server.getAttribute(name, "DatagramsIn"), "attributes are read live");
        TabularData table = (TabularData) server.getAttribute(name, "Counters");
        assertEquals(4, table.size());
        CompositeData[] jobs = (CompositeData[]) server.getAttribute(name, "Jobs");
        assertEquals("000000000000002a", jobs[0].get("jobId"));
        CompositeData rank = ((CompositeData[]) jobs[0].get("ranks"))[0];
        assertEquals(77L, rank.get("pid"));
        assertEquals("RUNNING", rank.get("state"));
        assertEquals("CRITICAL", server.getAttribute(name, "Health"));
        String[] report = (String[]) server.getAttribute(name, "HealthReport");
        assertEquals("programs.local CRITICAL /x is not a directory", report[1]);

        management.deactivate();
        assertFalse(server.isRegistered(name));
    }

    @Test
    void shouldReplaceAStaleRegistration() throws Exception {
        MBeanServer server = MBeanServerFactory.newMBeanServer();
        ProxyManagement first = new ProxyManagement(status, control, server);
        ProxyManagement second = new ProxyManagement(status, control, server);
        assertTrue(server.isRegistered(new ObjectName(ProxyMXBean.OBJECT_NAME)));
        second.deactivate();
        first.jobMBeans().close();
    }

    private static RankInfo rank(int id, RankInfo.State state, int exit, long in, long out) {
        return new RankInfo(id, 0, "prog", 100 + id, state, exit, in, out, 0, 0);
    }

    @Test
    void shouldRegisterAnMBeanPerJobWhileItRunsAndUnregisterItWhenItEnds() throws Exception {
        List<JobInfo> jobs = new java.util.concurrent.CopyOnWriteArrayList<>();
        ProxyStatus live = new ProxyStatus() {
            @Override
            public List<JobInfo> jobs() {
                return List.copyOf(jobs);
            }

            @Override
            public Map<String, Long> counters() {
                return Map.of();
            }
        };
        MBeanServer server = MBeanServerFactory.newMBeanServer();
        JobMBeans beans = new JobMBeans(live, server);
        ObjectName name = new ObjectName("org.mpiproxy:type=Job,id=00000000000000a1");
        assertEquals(name, JobMBeans.name(0xa1L));

        jobs.add(new JobInfo(0xa1L, "v2", "10.0.0.1:7", Instant.EPOCH, List.of(
                rank(1, RankInfo.State.RUNNING, -1, 10, 20), rank(2, RankInfo.State.EXITED, 3, 5, 6))));
        beans.reconcile();

        assertTrue(server.isRegistered(name), "registered once the job runs");
        assertEquals("00000000000000a1", server.getAttribute(name, "JobId"));
        assertEquals("v2", server.getAttribute(name, "Protocol"));
        assertEquals(List.of(1, 2), java.util.Arrays.stream((int[]) server.getAttribute(name, "RankIds")).boxed()
                .toList());
        assertEquals(List.of("RUNNING", "EXITED"), List.of((String[]) server.getAttribute(name, "States")));
        assertEquals(List.of(-1, 3), java.util.Arrays.stream((int[]) server.getAttribute(name, "ExitStatuses"))
                .boxed().toList());
        assertEquals(15L, server.getAttribute(name, "BytesIn"));
        assertEquals(26L, server.getAttribute(name, "BytesOut"));
        assertEquals(2, ((CompositeData[]) server.getAttribute(name, "Ranks")).length);

        jobs.set(0, new JobInfo(0xa1L, "v2", "10.0.0.1:7", Instant.EPOCH, List.of(
                rank(1, RankInfo.State.RUNNING, -1, 40, 20), rank(2, RankInfo.State.EXITED, 3, 5, 6))));
        assertEquals(45L, server.getAttribute(name, "BytesIn"), "attributes are read live");

        jobs.set(0, new JobInfo(0xa1L, "v2", "10.0.0.1:7", Instant.EPOCH, List.of(
                rank(1, RankInfo.State.EXITED, 143, 40, 20), rank(2, RankInfo.State.EXITED, 3, 5, 6))));
        beans.reconcile();
        assertFalse(server.isRegistered(name), "unregistered once every rank has ended");

        jobs.add(new JobInfo(0xb2L, "v1", "10.0.0.2:7", Instant.EPOCH, List.of(
                rank(1, RankInfo.State.TERMINATING, -1, 0, 0))));
        beans.reconcile();
        assertEquals(java.util.Set.of(0xb2L), beans.registered());
        jobs.clear();
        beans.reconcile();
        assertFalse(server.isRegistered(JobMBeans.name(0xb2L)), "unregistered once the proxy forgets the job");

        jobs.add(new JobInfo(0xc3L, "v1", "10.0.0.3:7", Instant.EPOCH, List.of(
                rank(1, RankInfo.State.RUNNING, -1, 0, 0))));
        beans.reconcile();
        beans.close();
        assertFalse(server.isRegistered(JobMBeans.name(0xc3L)), "closing unregisters every job MBean");
    }

    @Test
    void shouldFollowTheJobsOnItsOwnThread() throws Exception {
        MBeanServer server = MBeanServerFactory.newMBeanServer();
        java.util.concurrent.CountDownLatch registered = new java.util.concurrent.CountDownLatch(1);
        server.addNotificationListener(javax.management.MBeanServerDelegate.DELEGATE_NAME, (n, handback) -> {
            if (n instanceof javax.management.MBeanServerNotification m
                    && javax.management.MBeanServerNotification.REGISTRATION_NOTIFICATION.equals(m.getType())
                    && JobMBeans.name(0x2aL).equals(m.getMBeanName())) {
                registered.countDown();
            }
        }, null, null);
        ProxyManagement management = new ProxyManagement(status, control, server);
        try {
            assertTrue(registered.await(Await.CEILING.toSeconds(), java.util.concurrent.TimeUnit.SECONDS),
                    "the running job of the status");
        } finally {
            management.deactivate();
        }
        assertFalse(server.isRegistered(JobMBeans.name(0x2aL)), "deactivation unregisters the job MBeans");
    }
}
