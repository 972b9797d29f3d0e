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
        new ProxyManagement(status, control, server);
        ProxyManagement second = new ProxyManagement(status, control, server);
        assertTrue(server.isRegistered(new ObjectName(ProxyMXBean.OBJECT_NAME)));
        second.deactivate();
    }
}
