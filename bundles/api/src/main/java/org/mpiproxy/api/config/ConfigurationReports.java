package org.mpiproxy.api.config;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * What the node's components refused of their configuration, by PID, until it is fixed, and the
 * keys of their configurations they do not define.
 * <p>
 * Karaf's {@code config:property-set} returns before a component sees the change, and the
 * component's one-line reason goes to the log only: the health checks read this record instead.
 * {@link CheckedConfiguration} and {@link ConfigurationGate} write to it; {@link #node()} is the
 * one record of the node (this package's bundle is shared by every bundle that reports). Thread-safe.
 */
public final class ConfigurationReports {

    private static final ConfigurationReports NODE = new ConfigurationReports();

    /**
     * What one PID's component refused.
     *
     * @param pid         the configuration PID
     * @param refusal     the one-line reason of the last refused value, {@code null} when the
     *                    configuration in force is the one given
     * @param started     whether the component runs (on its last good configuration); {@code false}
     *                    when it never had a good one
     * @param unknownKeys one line per key of the configuration the component does not define
     */
    public record Report(String pid, String refusal, boolean started, List<String> unknownKeys) {
        public Report {
            Objects.requireNonNull(pid, "pid");
            unknownKeys = List.copyOf(unknownKeys);
        }
    }

    private static final class State {
        String refusal;
        boolean started;
        /** Unknown keys of the latest configuration, with their lines. */
        Map<String, String> unknown = new TreeMap<>();
        /** Unknown keys already warned about in the log. */
        final Set<String> warned = new TreeSet<>();
    }

    private final Map<String, State> byPid = new TreeMap<>();

    /** @return the record of this node */
    public static ConfigurationReports node() {
        return NODE;
    }

    /**
     * @param pid     the configuration PID
     * @param line    the one-line reason, as logged
     * @param started whether the component runs on a last good configuration
     */
    public synchronized void refused(String pid, String line, boolean started) {
        State s = state(pid);
        s.refusal = Objects.requireNonNull(line, "line");
        s.started = started;
    }

    /**
     * The component now runs with the configuration it was given: its refusal is over.
     *
     * @param pid the configuration PID
     */
    public synchronized void accepted(String pid) {
        State s = state(pid);
        s.refusal = null;
        s.started = true;
    }

    /**
     * Notes the keys of a configuration the component does not define; each is warned about once
     * per PID, however often the configuration changes. Karaf's and the runtime's own keys
     * ({@code service.*}, {@code felix.fileinstall.*}, {@code component.*}, and Declarative Services'
     * {@code osgi.*} and {@code <reference>.target}, and the project's own service properties
     * {@code mpiproxy.*} that components declare) are not unknown.
     *
     * @param pid        the configuration PID
     * @param properties the raw properties
     * @param known      the keys the component defines
     * @param warnings   gets one line per key not warned about before
     */
    public void keys(String pid, Map<String, ?> properties, Collection<String> known, Consumer<String> warnings) {
        Map<String, String> unknown = new TreeMap<>();
        if (properties != null) {
            for (String key : properties.keySet()) {
                if (!known.contains(key) && !runtimeKey(key)) {
                    String close = closest(key, known);
                    unknown.put(key, pid + ": unknown key " + key
                            + (close == null ? "" : " (did you mean " + close + "?)") + "; ignored");
                }
            }
        }
        List<String> first = new ArrayList<>();
        synchronized (this) {
            State s = state(pid);
            s.unknown = unknown;
            for (Map.Entry<String, String> e : unknown.entrySet()) {
                if (s.warned.add(e.getKey())) {
                    first.add(e.getValue());
                }
            }
        }
        first.forEach(warnings);
    }

    /** @return a report per PID that has a refused value or an unknown key, by PID */
    public synchronized List<Report> reports() {
        List<Report> reports = new ArrayList<>();
        byPid.forEach((pid, s) -> {
            if (s.refusal != null || !s.unknown.isEmpty()) {
                reports.add(new Report(pid, s.refusal, s.started, new ArrayList<>(s.unknown.values())));
            }
        });
        return reports;
    }

    /**
     * @param key a configuration key
     * @return whether Karaf, Configuration Admin, File Install or Declarative Services set it
     */
    public static boolean runtimeKey(String key) {
        // Declarative Services adds the reference targets (<reference>.target) and its osgi.ds.* properties
        return key.startsWith("service.") || key.startsWith("felix.fileinstall.") || key.startsWith("component.")
                || key.startsWith("org.apache.karaf.") || key.startsWith(".") || key.equals("objectClass")
                || key.startsWith("osgi.") || key.endsWith(".target")
                // the service properties components declare themselves (ProcessLauncher.KIND, .CORES)
                || key.startsWith("mpiproxy.");
    }

    /**
     * @return the known key closest to {@code key} when it is a likely misspelling (at most two
     *         edits, or a fifth of its length), else {@code null}
     */
    static String closest(String key, Collection<String> known) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String k : new TreeSet<>(known)) {
            int d = distance(key, k);
            if (d < bestDistance) {
                best = k;
                bestDistance = d;
            }
        }
        return bestDistance <= Math.max(2, key.length() / 5) ? best : null;
    }

    /** Levenshtein distance. */
    private static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                current[j] = Math.min(Math.min(current[j - 1] + 1, previous[j] + 1), previous[j - 1] + cost);
            }
            int[] t = previous;
            previous = current;
            current = t;
        }
        return previous[b.length()];
    }

    private State state(String pid) {
        return byPid.computeIfAbsent(Objects.requireNonNull(pid, "pid"), p -> new State());
    }
}
