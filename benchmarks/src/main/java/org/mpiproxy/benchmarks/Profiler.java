package org.mpiproxy.benchmarks;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/** JFR execution sampling of a phase, summarised as the hottest top frames per thread. */
final class Profiler {

    private Recording recording;

    void start() {
        recording = new Recording();
        recording.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(10));
        recording.enable("jdk.NativeMethodSample").withPeriod(Duration.ofMillis(10));
        recording.start();
    }

    void stop(Path file) throws IOException {
        recording.stop();
        recording.dump(file);
        recording.close();
    }

    /** @return per thread of interest: sample count and the {@code top} hottest top-of-stack methods */
    static String summary(Path file, int top) throws IOException {
        Map<String, Map<String, Integer>> byThread = new TreeMap<>();
        for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
            String kind = e.getEventType().getName().equals("jdk.NativeMethodSample") ? "native " : "";
            if (!e.hasField("sampledThread")) {
                continue;
            }
            String thread = e.getThread("sampledThread") == null ? "?" : e.getThread("sampledThread").getJavaName();
            if (thread == null || !(thread.startsWith("mpiproxy") || thread.startsWith("rank-")
                    || thread.startsWith("harness") || thread.startsWith("bench"))) {
                continue;
            }
            RecordedStackTrace stack = e.getStackTrace();
            String frame = "?";
            if (stack != null && !stack.getFrames().isEmpty()) {
                RecordedFrame f = stack.getFrames().get(0);
                frame = f.getMethod().getType().getName() + "." + f.getMethod().getName();
            }
            byThread.computeIfAbsent(thread, k -> new HashMap<>()).merge(kind + frame, 1, Integer::sum);
        }
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, Map<String, Integer>> t : byThread.entrySet()) {
            int total = t.getValue().values().stream().mapToInt(Integer::intValue).sum();
            sb.append(String.format(Locale.ROOT, "thread %s: %d samples%n", t.getKey(), total));
            List<Map.Entry<String, Integer>> hot = t.getValue().entrySet().stream()
                    .sorted(Map.Entry.<String, Integer>comparingByValue().reversed()).limit(top)
                    .collect(Collectors.toList());
            for (Map.Entry<String, Integer> h : hot) {
                sb.append(String.format(Locale.ROOT, "  %5.1f%%  %s%n", 100.0 * h.getValue() / total, h.getKey()));
            }
        }
        return sb.toString();
    }
}
