package org.mpiproxy.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Resident memory and CPU time from /proc. */
final class Memory {

    /** Clock ticks per second of /proc/.../stat times (USER_HZ, 100 on Linux). */
    static final double TICKS_PER_SECOND = 100.0;

    private Memory() {
    }

    static double selfRssMiB() {
        return rssMiB(ProcessHandle.current().pid());
    }

    static double descendantsRssMiB() {
        return ProcessHandle.current().descendants().mapToDouble(p -> rssMiB(p.pid())).sum();
    }

    static double rssMiB(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
                }
            }
        } catch (IOException | RuntimeException e) {
            return 0;
        }
        return 0;
    }

    /** @return utime + stime in ticks of a process or thread stat file, or -1 */
    static long cpuTicks(Path stat) {
        try {
            String s = Files.readString(stat);
            // fields after the command, which is in parentheses and may contain spaces
            String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(f[11]) + Long.parseLong(f[12]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    static Path processStat(long pid) {
        return Path.of("/proc/" + pid + "/stat");
    }

    /** @return the stat file of this JVM's thread whose name starts with {@code prefix} (first 15 chars), or null */
    static Path threadStat(String prefix) throws IOException {
        String comm = prefix.length() > 15 ? prefix.substring(0, 15) : prefix;
        try (var tasks = Files.list(Path.of("/proc/self/task"))) {
            List<Path> all = tasks.toList();
            for (Path task : all) {
                try {
                    if (Files.readString(task.resolve("comm")).trim().equals(comm)) {
                        return Path.of("/proc/" + ProcessHandle.current().pid() + "/task/" + task.getFileName() + "/stat");
                    }
                } catch (IOException e) {
                    // the thread ended meanwhile
                }
            }
        }
        return null;
    }
}
