package org.mpiproxy.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The nodes of a Slurm allocation from a job's environment: {@code SLURM_JOB_NODELIST} (or
 * {@code SLURM_NODELIST}), a hostlist expression such as {@code n[01-04,07]},
 * {@code a[1-2],b3} or {@code rack[1-2]-n[1-3]}, and {@code SLURM_TASKS_PER_NODE}, such as
 * {@code 2(x3),1}. Ranges keep the lower bound's zero padding ({@code n[08-10]} is n08, n09,
 * n10). Malformed values fail with an {@link IllegalArgumentException} naming the variable,
 * echoing the value and the position of the problem.
 */
public final class SlurmAllocation {

    /** The allocation's node list. */
    public static final String NODELIST_ENV = "SLURM_JOB_NODELIST";
    /** Older name of {@link #NODELIST_ENV}, still set by srun. */
    public static final String OLD_NODELIST_ENV = "SLURM_NODELIST";
    /** Tasks per node, in the node list's order. */
    public static final String TASKS_ENV = "SLURM_TASKS_PER_NODE";
    /** Most host names one expression may expand to. */
    public static final int MAX_HOSTS = 65534;

    private SlurmAllocation() {
    }

    /**
     * @param env the environment
     * @return whether it describes a Slurm allocation (a node list is set)
     */
    public static boolean isPresent(Function<String, String> env) {
        return nodeList(env) != null;
    }

    /**
     * @param env the environment
     * @return the allocation's nodes with their task counts (1 each when
     *         {@value #TASKS_ENV} is not set)
     * @throws IllegalArgumentException when no node list is set, a value is malformed, or the
     *                                  task counts do not match the node list
     */
    public static List<NodeSlots> fromEnvironment(Function<String, String> env) {
        String list = nodeList(env);
        if (list == null) {
            throw new IllegalArgumentException("not in a Slurm allocation: " + NODELIST_ENV + " is not set");
        }
        String listName = env.apply(NODELIST_ENV) != null ? NODELIST_ENV : OLD_NODELIST_ENV;
        List<String> hosts = expandHostlist(listName, list);
        String tasks = env.apply(TASKS_ENV);
        List<Integer> counts;
        if (tasks == null || tasks.isBlank()) {
            counts = new ArrayList<>();
            hosts.forEach(h -> counts.add(1));
        } else {
            counts = expandTasksPerNode(TASKS_ENV, tasks);
        }
        if (counts.size() != hosts.size()) {
            throw new IllegalArgumentException(TASKS_ENV + "='" + Numbers.printable(tasks) + "' gives " + counts.size()
                    + " node(s) but " + listName + "='" + Numbers.printable(list) + "' names " + hosts.size());
        }
        List<NodeSlots> nodes = new ArrayList<>(hosts.size());
        for (int i = 0; i < hosts.size(); i++) {
            nodes.add(new NodeSlots(hosts.get(i), counts.get(i)));
        }
        return List.copyOf(nodes);
    }

    private static String nodeList(Function<String, String> env) {
        String list = env.apply(NODELIST_ENV);
        if (list == null || list.isBlank()) {
            list = env.apply(OLD_NODELIST_ENV);
        }
        return list == null || list.isBlank() ? null : list.strip();
    }

    /**
     * Expands a Slurm hostlist expression.
     *
     * @param name       the variable or option it came from, for messages
     * @param expression e.g. {@code n[01-04,07],login1}
     * @return the host names in order
     * @throws IllegalArgumentException when malformed
     */
    public static List<String> expandHostlist(String name, String expression) {
        List<String> hosts = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i <= expression.length(); i++) {
            char c = i < expression.length() ? expression.charAt(i) : ',';
            if (c == '[') {
                if (depth > 0) {
                    throw bad(name, expression, i, "'[' inside a bracket (ranges do not nest)");
                }
                depth++;
            } else if (c == ']') {
                if (depth == 0) {
                    throw bad(name, expression, i, "']' without '['");
                }
                depth--;
            } else if (c == ',' && depth == 0) {
                if (i == start) {
                    throw bad(name, expression, i, "empty host name");
                }
                expandItem(name, expression, start, i, hosts);
                start = i + 1;
            }
        }
        if (depth > 0) {
            throw bad(name, expression, expression.lastIndexOf('['), "'[' is not closed");
        }
        return List.copyOf(hosts);
    }

    /** Expands expression[from, to): literal parts and bracket groups, as a cartesian product. */
    private static void expandItem(String name, String expression, int from, int to, List<String> out) {
        List<String> partial = new ArrayList<>();
        partial.add("");
        int i = from;
        while (i < to) {
            char c = expression.charAt(i);
            if (c == '[') {
                int close = expression.indexOf(']', i);
                List<String> values = ranges(name, expression, i + 1, close);
                List<String> next = new ArrayList<>(partial.size() * values.size());
                for (String p : partial) {
                    for (String v : values) {
                        next.add(p + v);
                        if (out.size() + next.size() > MAX_HOSTS) {
                            throw bad(name, expression, i, "expands to more than " + MAX_HOSTS + " hosts");
                        }
                    }
                }
                partial = next;
                i = close + 1;
            } else {
                int j = i;
                while (j < to && (c = expression.charAt(j)) != '[') {
                    if (!(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.'
                            || c == '_')) {
                        throw bad(name, expression, j, "'" + Numbers.printable(String.valueOf(c))
                                + "' is not allowed in a host name");
                    }
                    j++;
                }
                String literal = expression.substring(i, j);
                for (int k = 0; k < partial.size(); k++) {
                    partial.set(k, partial.get(k) + literal);
                }
                i = j;
            }
        }
        out.addAll(partial);
    }

    /** @return the values of the comma-separated ranges in expression[from, to) */
    private static List<String> ranges(String name, String expression, int from, int to) {
        List<String> values = new ArrayList<>();
        int start = from;
        for (int i = from; i <= to; i++) {
            if (i < to && expression.charAt(i) != ',') {
                continue;
            }
            String range = expression.substring(start, i);
            if (range.isEmpty()) {
                throw bad(name, expression, start, "empty range in brackets");
            }
            int dash = range.indexOf('-');
            String lo = dash < 0 ? range : range.substring(0, dash);
            String hi = dash < 0 ? range : range.substring(dash + 1);
            int low = Numbers.parse(lo, 0, 999_999_999);
            int high = Numbers.parse(hi, 0, 999_999_999);
            if (low < 0 || high < 0) {
                throw bad(name, expression, start, "range '" + Numbers.printable(range)
                        + "' is not N or N-M with decimal numbers");
            }
            if (low > high) {
                throw bad(name, expression, start, "range '" + range + "' runs backwards");
            }
            if (high - low >= MAX_HOSTS) {
                throw bad(name, expression, start, "range '" + range + "' has more than " + MAX_HOSTS + " hosts");
            }
            int width = lo.length() > 1 && lo.charAt(0) == '0' ? lo.length() : 0;
            for (int v = low; v <= high; v++) {
                values.add(width == 0 ? Integer.toString(v) : String.format("%0" + width + "d", v));
            }
            start = i + 1;
        }
        return values;
    }

    /**
     * Expands {@code SLURM_TASKS_PER_NODE}: comma-separated {@code n} or {@code n(xk)} (n tasks
     * on each of k nodes).
     *
     * @param name       the variable, for messages
     * @param expression e.g. {@code 2(x3),1}
     * @return the task count of each node, in order
     * @throws IllegalArgumentException when malformed
     */
    public static List<Integer> expandTasksPerNode(String name, String expression) {
        List<Integer> counts = new ArrayList<>();
        int position = 0;
        for (String item : expression.strip().split(",", -1)) {
            int paren = item.indexOf('(');
            String count = paren < 0 ? item : item.substring(0, paren);
            int tasks = Numbers.parse(count, 1, Hostfiles.MAX_SLOTS);
            int repeat = 1;
            if (tasks < 0) {
                throw bad(name, expression, position, "'" + Numbers.printable(item)
                        + "' is not a task count n or n(xk) with n >= 1");
            }
            if (paren >= 0) {
                String tail = item.substring(paren);
                repeat = tail.startsWith("(x") && tail.endsWith(")")
                        ? Numbers.parse(tail.substring(2, tail.length() - 1), 1, MAX_HOSTS) : -1;
                if (repeat < 0) {
                    throw bad(name, expression, position + paren, "'" + Numbers.printable(tail)
                            + "' is not a repeat (xk) with k >= 1");
                }
            }
            if (counts.size() + repeat > MAX_HOSTS) {
                throw bad(name, expression, position, "more than " + MAX_HOSTS + " nodes");
            }
            for (int k = 0; k < repeat; k++) {
                counts.add(tasks);
            }
            position += item.length() + 1;
        }
        return List.copyOf(counts);
    }

    private static IllegalArgumentException bad(String name, String expression, int position, String problem) {
        return new IllegalArgumentException(name + "='" + Numbers.printable(expression) + "': " + problem
                + " at position " + (position + 1));
    }
}
