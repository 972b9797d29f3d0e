package org.mpiproxy.proxy.internal;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import org.mpiproxy.api.ProcessLauncher;

/**
 * The launchers bound to the proxy, chosen for each rank by the cores they declare.
 * <p>
 * A launcher serves the cores of its {@link ProcessLauncher#CORES} service property
 * (comma-separated core numbers and ranges: {@code 0}, {@code 1-}, {@code 2-7}, {@code 0,4-5});
 * without it, its {@link ProcessLauncher#KIND} says: {@code local} core 0, {@code core} 1 and
 * above. Where several serve a core, the highest {@code service.ranking} wins, then the oldest
 * service. A new kind of launcher therefore only registers with its cores; the proxy does not
 * change. A launcher whose cores cannot be read is left out, with one line saying why.
 * <p>
 * Bound and unbound on the component's threads, read on the launch path: copy-on-write.
 */
final class LauncherTable {

    /** One bound launcher. */
    private record Entry(ProcessLauncher launcher, long[] ranges, int ranking, long serviceId) {

        boolean serves(int core) {
            for (int i = 0; i < ranges.length; i += 2) {
                if (core >= ranges[i] && core <= ranges[i + 1]) {
                    return true;
                }
            }
            return false;
        }
    }

    private static final Comparator<Entry> ORDER = Comparator.comparingInt(Entry::ranking).reversed()
            .thenComparingLong(Entry::serviceId);

    private final Consumer<String> problems;
    private volatile List<Entry> entries = List.of();

    /** @param problems gets the one line about a launcher whose cores cannot be read */
    LauncherTable(Consumer<String> problems) {
        this.problems = problems;
    }

    /**
     * Adds a launcher, or replaces what is known of it when its properties changed.
     *
     * @param launcher   the service
     * @param properties its service properties
     */
    synchronized void bind(ProcessLauncher launcher, Map<String, ?> properties) {
        List<Entry> next = new ArrayList<>(entries);
        next.removeIf(e -> e.launcher() == launcher);
        long[] ranges;
        try {
            ranges = cores(properties);
        } catch (IllegalArgumentException e) {
            problems.accept("launcher " + name(properties) + " is not used: " + e.getMessage());
            entries = List.copyOf(next);
            return;
        }
        next.add(new Entry(launcher, ranges, intProperty(properties.get("service.ranking")),
                properties.get("service.id") instanceof Number n ? n.longValue() : Long.MAX_VALUE));
        next.sort(ORDER);
        entries = List.copyOf(next);
    }

    /** @param launcher a service that went away */
    synchronized void unbind(ProcessLauncher launcher) {
        List<Entry> next = new ArrayList<>(entries);
        if (next.removeIf(e -> e.launcher() == launcher)) {
            entries = List.copyOf(next);
        }
    }

    /**
     * @param core a rank's core (0: the proxy's own)
     * @return the launcher for it, or {@code null} when none serves it now
     */
    ProcessLauncher forCore(int core) {
        for (Entry e : entries) {
            if (e.serves(core)) {
                return e.launcher();
            }
        }
        return null;
    }

    /**
     * @param properties a launcher's service properties
     * @return its cores as pairs of inclusive bounds
     * @throws IllegalArgumentException naming the property and the value that cannot be read
     */
    static long[] cores(Map<String, ?> properties) {
        Object spec = properties.get(ProcessLauncher.CORES);
        if (spec == null) {
            Object kind = properties.get(ProcessLauncher.KIND);
            if (ProcessLauncher.KIND_LOCAL.equals(kind)) {
                return new long[] {0, 0};
            }
            if (ProcessLauncher.KIND_CORE.equals(kind)) {
                return new long[] {1, Long.MAX_VALUE};
            }
            throw new IllegalArgumentException("it has neither " + ProcessLauncher.CORES + " nor a known "
                    + ProcessLauncher.KIND + " (" + kind + ")");
        }
        String text = String.valueOf(spec).trim();
        String[] parts = text.split(",");
        long[] ranges = new long[parts.length * 2];
        for (int i = 0; i < parts.length; i++) {
            String part = parts[i].trim();
            int dash = part.indexOf('-');
            try {
                long lo = Long.parseLong(dash < 0 ? part : part.substring(0, dash));
                long hi = dash < 0 ? lo
                        : dash == part.length() - 1 ? Long.MAX_VALUE : Long.parseLong(part.substring(dash + 1));
                if (lo < 0 || hi < lo) {
                    throw new NumberFormatException();
                }
                ranges[2 * i] = lo;
                ranges[2 * i + 1] = hi;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(ProcessLauncher.CORES + "=" + text
                        + " is not a list of cores and ranges such as 0, 1- or 2-7,9", e);
            }
        }
        return ranges;
    }

    /** @return how an operator finds the launcher: its component's name, else its service id */
    private static String name(Map<String, ?> properties) {
        Object component = properties.get("component.name");
        return component != null ? String.valueOf(component) : "service " + properties.get("service.id");
    }

    private static int intProperty(Object value) {
        return value instanceof Integer i ? i : 0;
    }
}
