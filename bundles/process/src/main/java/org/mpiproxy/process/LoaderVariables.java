package org.mpiproxy.process;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The variables the dynamic loader and the C library act on ({@code LD_PRELOAD}, {@code LD_*},
 * {@code GLIBC_TUNABLES}, {@code GCONV_PATH}, ...) must not reach a program that still runs as
 * root. A rank run as another user is spawned as {@code setpriv}, which runs as root until it has
 * dropped the privileges: so those variables are moved aside under {@value #PREFIX}{@code NAME}
 * for {@code setpriv}, and a shell started by it, already as the rank's user, puts them back and
 * becomes the program ({@code exec}). The glibc list is the one it clears for set-user-ID
 * programs, plus every {@code LD_} and {@code MALLOC_} name.
 */
public final class LoaderVariables {

    /** Prefix of a variable moved aside until the privileges are dropped. */
    public static final String PREFIX = "MPIPROXY_AFTER_DROP_";

    private static final Set<String> NAMED = Set.of("GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES",
            "LOCALDOMAIN", "LOCPATH", "NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TMPDIR", "TZDIR");

    private LoaderVariables() {
    }

    /** @return whether {@code name} acts on the loader or the C library of any program started with it */
    public static boolean unsafe(String name) {
        return name.startsWith("LD_") || name.startsWith("MALLOC_") || NAMED.contains(name);
    }

    /**
     * @param lines an environment as {@code NAME=value} lines
     * @param moved receives the names moved aside, in order
     * @return the lines with each unsafe {@code NAME=value} as {@value #PREFIX}{@code NAME=value}
     */
    public static List<String> moveAside(List<String> lines, List<String> moved) {
        List<String> out = new ArrayList<>(lines.size());
        for (String line : lines) {
            int eq = line.indexOf('=');
            String name = eq < 0 ? line : line.substring(0, eq);
            if (unsafe(name) && plainName(name)) {
                moved.add(name);
                out.add(PREFIX + line);
            } else if (unsafe(name)) {
                // a name no shell could put back: the rank does without it
                continue;
            } else {
                out.add(line);
            }
        }
        return out;
    }

    /** As {@link #moveAside(List, List)} on a map, in place. */
    public static void moveAside(Map<String, String> environment, List<String> moved) {
        for (String name : List.copyOf(environment.keySet())) {
            if (unsafe(name)) {
                String value = environment.remove(name);
                if (plainName(name)) {
                    moved.add(name);
                    environment.put(PREFIX + name, value);
                }
            }
        }
    }

    /**
     * @param moved the names {@link #moveAside} moved
     * @param argv  the program's command line
     * @return {@code argv} when nothing was moved, else {@code /bin/sh -c} with a script that
     *         exports each moved variable under its own name, unsets the moved-aside one and
     *         {@code exec}s {@code argv}
     */
    public static List<String> restoring(List<String> moved, List<String> argv) {
        if (moved.isEmpty()) {
            return argv;
        }
        StringBuilder script = new StringBuilder();
        for (String name : moved) {
            script.append("export ").append(name).append("=\"$").append(PREFIX).append(name).append("\"; unset ")
                    .append(PREFIX).append(name).append("; ");
        }
        script.append("exec \"$@\"");
        List<String> command = new ArrayList<>(argv.size() + 4);
        command.add("/bin/sh");
        command.add("-c");
        command.add(script.toString());
        command.add("sh");
        command.addAll(argv);
        return command;
    }

    /** @return whether a shell can name {@code name} in {@code export} (letters, digits, '_', no leading digit) */
    private static boolean plainName(String name) {
        if (name.isEmpty() || Character.isDigit(name.charAt(0))) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9')) {
                return false;
            }
        }
        return true;
    }
}
