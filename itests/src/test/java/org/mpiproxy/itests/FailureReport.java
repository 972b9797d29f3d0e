package org.mpiproxy.itests;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import org.junit.rules.TestWatcher;
import org.junit.runner.Description;

/**
 * Keeps what explains a failed test in the Karaf that ran it: every thread's stack and the tail of
 * {@code karaf.log}, in {@code itests/target/itest-failures/<class>.<method>.txt}, which outlives
 * the runtime folder Pax Exam deletes; its path and the log's last lines go to standard error.
 * {@code .ci/run} prints these files when the tests fail.
 */
final class FailureReport extends TestWatcher {

    /** Lines of {@code karaf.log} kept in the report. */
    static final int LOG_LINES = 400;
    /** Lines of it also printed to standard error. */
    static final int PRINTED_LINES = 40;

    private final Path directory;

    /** @param directory where reports are written; created on the first failure */
    FailureReport(Path directory) {
        this.directory = directory;
    }

    @Override
    protected void failed(Throwable e, Description description) {
        String name = description.getClassName().replaceAll(".*\\.", "") + "." + description.getMethodName();
        List<String> log = tail(karafLog(), LOG_LINES);
        StringBuilder report = new StringBuilder();
        report.append(name).append(" failed at ").append(Instant.now()).append(": ").append(e).append("\n\n");
        report.append("== threads ==\n").append(threadDump()).append('\n');
        report.append("== last ").append(log.size()).append(" lines of karaf.log ==\n");
        log.forEach(line -> report.append(line).append('\n'));
        try {
            Files.createDirectories(directory);
            Path file = directory.resolve(name + ".txt");
            Files.writeString(file, report, StandardCharsets.UTF_8);
            System.err.println(name + " failed; threads and log in " + file);
        } catch (IOException io) {
            System.err.println(name + " failed; cannot write its report: " + io);
        }
        tail(log, PRINTED_LINES).forEach(line -> System.err.println("  karaf.log: " + line));
    }

    /** @return where this runtime's Karaf log is, {@code null} outside Karaf */
    static Path karafLog() {
        String data = System.getProperty("karaf.data");
        return data == null ? null : Paths.get(data, "log", "karaf.log");
    }

    /** @return the last {@code n} lines of a file, none when it cannot be read */
    static List<String> tail(Path file, int n) {
        if (file == null || !Files.isReadable(file)) {
            return List.of();
        }
        try {
            return tail(Files.readAllLines(file, StandardCharsets.UTF_8), n);
        } catch (IOException | RuntimeException e) {
            return List.of("(cannot read " + file + ": " + e + ")");
        }
    }

    static List<String> tail(List<String> lines, int n) {
        return new ArrayList<>(lines.subList(Math.max(0, lines.size() - n), lines.size()));
    }

    /** @return every live thread with its state, the lock it waits for and its whole stack */
    static String threadDump() {
        StringBuilder dump = new StringBuilder();
        for (ThreadInfo info : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
            dump.append('"').append(info.getThreadName()).append("\" ").append(info.getThreadState());
            if (info.getLockName() != null) {
                dump.append(" on ").append(info.getLockName());
            }
            if (info.getLockOwnerName() != null) {
                dump.append(" owned by \"").append(info.getLockOwnerName()).append('"');
            }
            dump.append('\n');
            for (StackTraceElement frame : info.getStackTrace()) {
                dump.append("    at ").append(frame).append('\n');
            }
            dump.append('\n');
        }
        return dump.toString();
    }
}
