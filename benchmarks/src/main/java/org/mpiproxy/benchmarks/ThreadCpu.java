package org.mpiproxy.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * CPU time of named threads of this JVM over an interval, as shares of the wall time: shows
 * whether a pipeline of threads runs in series (shares adding up to about one CPU) or in
 * parallel, which JFR's execution samples do not (they miss threads inside intrinsic stubs
 * such as SHA-256, and threads waiting in the kernel).
 */
final class ThreadCpu {

    private final ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    private final Map<String, Long> ids = new LinkedHashMap<>();
    private final Map<String, Long> start = new LinkedHashMap<>();
    private final long t0 = System.nanoTime();

    /** @param names the threads to watch, by name (the first thread of each name) */
    ThreadCpu(String... names) {
        for (String name : names) {
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getName().equals(name)) {
                    ids.put(name, t.getId());
                    start.put(name, mx.getThreadCpuTime(t.getId()));
                    break;
                }
            }
        }
    }

    /** @return each watched thread's CPU time since construction as a percentage of the wall time */
    String shares() {
        double wall = System.nanoTime() - t0;
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, Long> e : ids.entrySet()) {
            long now = mx.getThreadCpuTime(e.getValue());
            if (sb.length() > 0) {
                sb.append(", ");
            }
            String name = e.getKey().startsWith("harness") ? "host" : e.getKey();
            sb.append(String.format(Locale.ROOT, "%s %.0f%%", name, 100 * (now - start.get(e.getKey())) / wall));
        }
        return sb.toString();
    }
}
