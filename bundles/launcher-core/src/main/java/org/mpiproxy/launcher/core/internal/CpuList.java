package org.mpiproxy.launcher.core.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.List;

/** Parses Linux CPU lists such as {@code 0-1,4} (the {@code Cpus_allowed_list} of /proc status). */
final class CpuList {

    /** Highest CPU number accepted, so a malformed list cannot allocate a huge set. */
    static final int MAX_CPU = 65535;

    private static final String ALLOWED_LIST_KEY = "Cpus_allowed_list:";

    private CpuList() {
    }

    /**
     * @param list comma-separated CPU numbers and inclusive ranges {@code a-b}
     * @return the CPUs in the list
     * @throws IllegalArgumentException when the list is empty or malformed
     */
    static BitSet parse(String list) {
        String trimmed = list == null ? "" : list.trim();
        if (trimmed.isEmpty()) {
            throw new IllegalArgumentException("empty CPU list");
        }
        BitSet cpus = new BitSet();
        for (String item : trimmed.split(",", -1)) {
            int dash = item.indexOf('-');
            if (dash < 0) {
                cpus.set(cpu(item, list));
            } else {
                int first = cpu(item.substring(0, dash), list);
                int last = cpu(item.substring(dash + 1), list);
                if (last < first) {
                    throw malformed(list);
                }
                cpus.set(first, last + 1);
            }
        }
        return cpus;
    }

    /**
     * @param statusLines the lines of a /proc/[pid]/status file
     * @return the value of its {@code Cpus_allowed_list} line, trimmed
     * @throws IllegalArgumentException when there is no such line
     */
    static String allowedList(List<String> statusLines) {
        for (String line : statusLines) {
            if (line.startsWith(ALLOWED_LIST_KEY)) {
                return line.substring(ALLOWED_LIST_KEY.length()).trim();
            }
        }
        throw new IllegalArgumentException("no " + ALLOWED_LIST_KEY + " line");
    }

    /**
     * @param statusFile a /proc/[pid]/status file
     * @return its allowed CPU list
     * @throws IOException when it cannot be read or has no such line
     */
    static String allowedList(Path statusFile) throws IOException {
        try {
            return allowedList(Files.readAllLines(statusFile, StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
            throw new IOException(statusFile + ": " + e.getMessage(), e);
        }
    }

    private static int cpu(String digits, String list) {
        if (digits.isEmpty() || digits.length() > 5) {
            throw malformed(list);
        }
        for (int i = 0; i < digits.length(); i++) {
            if (digits.charAt(i) < '0' || digits.charAt(i) > '9') {
                throw malformed(list);
            }
        }
        int cpu = Integer.parseInt(digits);
        if (cpu > MAX_CPU) {
            throw malformed(list);
        }
        return cpu;
    }

    private static IllegalArgumentException malformed(String list) {
        return new IllegalArgumentException("malformed CPU list '" + list + "'");
    }
}
