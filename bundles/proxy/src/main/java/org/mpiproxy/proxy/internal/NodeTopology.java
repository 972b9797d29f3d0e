package org.mpiproxy.proxy.internal;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.UnaryOperator;

import org.mpiproxy.api.PrivateDirectories;
import org.mpiproxy.process.LauncherDirectories;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's hardware topology, discovered once by hwloc ({@code lstopo-no-graphics --of xml}) into
 * a file every rank's user may read, and handed to MPICH ranks as {@code HWLOC_XMLFILE} with
 * {@code HWLOC_THISSYSTEM=1}, so that their {@code MPI_Init} loads it instead of walking
 * {@code /sys} each. Discovered again, in the background, when the file is older than the boot or
 * than {@code topology.max.age.hours}, when the CPUs online change, and when asked. Where hwloc is
 * missing or fails: one line, and ranks start without the variables (they discover it themselves).
 * Discovery runs on the executor given, never on the caller's thread; {@link #variables} only reads.
 * Thread-safe.
 */
final class NodeTopology {

    /** The variable naming the XML topology hwloc loads instead of discovering one. */
    static final String XML_VARIABLE = "HWLOC_XMLFILE";
    /** The variable telling hwloc that the XML topology is this machine's (binding then works). */
    static final String THIS_SYSTEM_VARIABLE = "HWLOC_THISSYSTEM";
    /** The topology's file in the directory. */
    static final String FILE = "topology.xml";
    /** Beside it: the CPUs online (as the kernel lists them) when it was discovered. */
    static final String CPUS_FILE = "topology.cpus";
    /** What discovers the topology: hwloc's lstopo without graphics, XML on standard output. */
    static final List<String> COMMAND = List.of("lstopo-no-graphics", "--of", "xml", "-");
    /** {@code rwxr-xr-x}: every rank's user reaches and reads the topology, nobody else writes it. */
    static final Set<PosixFilePermission> DIRECTORY_MODE = PosixFilePermissions.fromString("rwxr-xr-x");
    /** {@code rw-r--r--}. */
    static final Set<PosixFilePermission> FILE_MODE = PosixFilePermissions.fromString("rw-r--r--");

    private static final Logger LOG = LoggerFactory.getLogger(NodeTopology.class);
    private static final long TIMEOUT_SECONDS = 60;

    /**
     * @param handover whether plain ranks get the topology ({@code topology.handover})
     * @param maxAge   the age after which it is discovered again; zero: only after a boot or a CPU change
     */
    record Settings(boolean handover, Duration maxAge) {

        static final Settings DEFAULT = new Settings(true, Duration.ofHours(24));

        static Settings of(ProxyConfig config) {
            if (config.topology_max_age_hours() < 0) {
                throw new IllegalArgumentException("topology.max.age.hours=" + config.topology_max_age_hours()
                        + " must be >= 0");
            }
            return new Settings(config.topology_handover(), Duration.ofHours(config.topology_max_age_hours()));
        }
    }

    /** What the node says now: its CPUs online and when it booted. */
    interface Node {
        /** @return the CPUs online, as {@code /sys/devices/system/cpu/online} lists them */
        String onlineCpus();

        /** @return when the node booted, milliseconds since the epoch; 0 when unknown */
        long bootMillis();

        /** This Linux node. */
        Node LINUX = new Node() {
            @Override
            public String onlineCpus() {
                try {
                    return Files.readString(Path.of("/sys/devices/system/cpu/online")).trim();
                } catch (IOException e) {
                    return Integer.toString(Runtime.getRuntime().availableProcessors());
                }
            }

            @Override
            public long bootMillis() {
                try (BufferedReader r = Files.newBufferedReader(Path.of("/proc/stat"))) {
                    for (String line = r.readLine(); line != null; line = r.readLine()) {
                        if (line.startsWith("btime ")) {
                            return Long.parseLong(line.substring(6).trim()) * 1000L;
                        }
                    }
                } catch (IOException | NumberFormatException e) {
                    // unknown: only the age and the CPUs count
                }
                return 0;
            }
        };
    }

    private final Path directory;
    private final List<String> command;
    private final Node node;
    private final LongSupplier clock;
    private final Executor executor;
    private final Consumer<String> warnings;
    private final AtomicBoolean checkQueued = new AtomicBoolean();
    private volatile Settings settings = Settings.DEFAULT;
    /** The topology's file while it may be handed out, else {@code null}. */
    private volatile Path ready;
    /** Under this object's lock: the CPUs online and the time of the file in {@link #ready}. */
    private String madeFor;
    private long madeAt;
    /** Under this object's lock: the CPUs and boot of the last failed discovery, not tried again for them. */
    private String failedFor;

    /**
     * @param directory where the topology is kept
     * @param command   the command that writes the XML topology to its standard output
     * @param node      the node's CPUs online and boot time
     * @param clock     milliseconds since the epoch
     * @param executor  runs the checks and discoveries (one at a time), never the caller's thread in production
     * @param warnings  gets the one line of a discovery that failed
     */
    NodeTopology(Path directory, List<String> command, Node node, LongSupplier clock, Executor executor,
                 Consumer<String> warnings) {
        this.directory = directory;
        this.command = List.copyOf(command);
        this.node = node;
        this.clock = clock;
        this.executor = executor;
        this.warnings = warnings;
    }

    /**
     * @param properties system property lookup, usually {@code System::getProperty}
     * @return {@code ${karaf.data}/mpiproxy/topology}
     */
    static Path directory(UnaryOperator<String> properties) {
        return LauncherDirectories.dataDirectory("", properties, "mpiproxy/topology");
    }

    /** @param next the settings from now on */
    void settings(Settings next) {
        this.settings = next;
    }

    /** Uses the file a previous start left when it is still the node's, else discovers it; in the background. */
    void start() {
        if (settings.handover()) {
            executor.execute(() -> check(false));
        }
    }

    /** Discovers the topology again, in the background, whatever the file says (asked by the operator). */
    void refresh() {
        if (settings.handover()) {
            executor.execute(() -> check(true));
        }
    }

    /**
     * What a plain rank's environment gets: nothing when the hand-over is off, when the rank sets
     * {@value #XML_VARIABLE} itself, or while there is no topology; else the file and
     * {@value #THIS_SYSTEM_VARIABLE}. Also has the file checked against the node, in the
     * background. Reads only: safe on the receive thread.
     *
     * @param rankEnvironment the variables the rank's request gives it
     * @return the variables to add
     */
    Map<String, String> variables(Map<String, String> rankEnvironment) {
        if (!settings.handover()) {
            return Map.of();
        }
        if (checkQueued.compareAndSet(false, true)) {
            executor.execute(() -> {
                checkQueued.set(false);
                check(false);
            });
        }
        Path file = ready;
        if (file == null || rankEnvironment.containsKey(XML_VARIABLE)) {
            return Map.of();
        }
        return Map.of(XML_VARIABLE, file.toString(), THIS_SYSTEM_VARIABLE, "1");
    }

    /** @return the topology's file while it is handed out, else {@code null} */
    Path file() {
        return ready;
    }

    /** Keeps the file when it is still the node's (unless forced), else discovers it again. */
    synchronized void check(boolean force) {
        if (!settings.handover()) {
            return;
        }
        String cpus = node.onlineCpus();
        long boot = node.bootMillis();
        long now = clock.getAsLong();
        if (!force) {
            if (ready == null && madeFor == null) {
                reuse(cpus, boot, now);
            }
            if (ready != null && current(cpus, boot, now)) {
                return;
            }
            if (ready == null && (cpus + "@" + boot).equals(failedFor)) {
                return;
            }
        }
        discover(cpus, boot);
    }

    private boolean current(String cpus, long boot, long now) {
        Duration maxAge = settings.maxAge();
        return cpus.equals(madeFor) && madeAt >= boot && (maxAge.isZero() || now - madeAt < maxAge.toMillis());
    }

    /** Takes the file a previous start of the proxy left, when it says which CPUs it was made for. */
    private void reuse(String cpus, long boot, long now) {
        Path file = directory.resolve(FILE);
        try {
            madeFor = Files.readString(directory.resolve(CPUS_FILE), StandardCharsets.US_ASCII).trim();
            madeAt = Files.getLastModifiedTime(file, LinkOption.NOFOLLOW_LINKS).toMillis();
            if (current(cpus, boot, now) && Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
                ready = file;
                LOG.info("node topology {} of CPUs {} used again for MPICH ranks", file, cpus);
            }
        } catch (NoSuchFileException e) {
            madeFor = null;
        } catch (IOException e) {
            madeFor = null;
            LOG.debug("node topology in {} not used again", directory, e);
        }
    }

    private void discover(String cpus, long boot) {
        long started = System.nanoTime();
        Path xml = null;
        Path errors = null;
        try {
            PrivateDirectories.ensure(directory, DIRECTORY_MODE, "topology directory " + directory);
            xml = ownFile(".topology-", ".xml");
            errors = ownFile(".lstopo-", ".err");
            Process p = new ProcessBuilder(command).redirectInput(new File("/dev/null"))
                    .redirectOutput(xml.toFile()).redirectError(errors.toFile()).start();
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(command.get(0) + " did not finish within " + TIMEOUT_SECONDS + " s");
            }
            if (p.exitValue() != 0) {
                throw new IOException(command.get(0) + " exited with status " + p.exitValue() + firstLine(errors));
            }
            if (!isTopology(xml)) {
                throw new IOException(command.get(0) + " wrote no XML topology" + firstLine(errors));
            }
            Path cpusFile = ownFile(".topology-", ".cpus");
            Files.writeString(cpusFile, cpus + "\n", StandardCharsets.US_ASCII);
            Path file = directory.resolve(FILE);
            Files.move(xml, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            Files.move(cpusFile, directory.resolve(CPUS_FILE), StandardCopyOption.REPLACE_EXISTING,
                    StandardCopyOption.ATOMIC_MOVE);
            madeFor = cpus;
            madeAt = Files.getLastModifiedTime(file, LinkOption.NOFOLLOW_LINKS).toMillis();
            failedFor = null;
            ready = file;
            LOG.info("node topology discovered into {} in {} ms (CPUs online {}): MPICH ranks get it as {}", file,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), cpus, XML_VARIABLE);
            Path closed = closedAncestor(directory);
            if (closed != null) {
                warnings.accept("node topology " + file + ": " + closed + " cannot be searched by others, so ranks"
                        + " of other users cannot read it (they discover the topology themselves)");
            }
        } catch (IOException | RuntimeException e) {
            fail(cpus, boot, e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail(cpus, boot, "interrupted");
        } finally {
            delete(xml);
            delete(errors);
        }
    }

    private void fail(String cpus, long boot, String problem) {
        ready = null;
        madeFor = null;
        failedFor = cpus + "@" + boot;
        warnings.accept("node topology not discovered (" + problem + "): MPICH ranks start without "
                + XML_VARIABLE + " and discover it themselves; install hwloc (lstopo-no-graphics) or set"
                + " topology.handover=false");
    }

    /** A new file of the proxy's, {@code rw-r--r--} whatever the umask. */
    private Path ownFile(String prefix, String suffix) throws IOException {
        Path file = Files.createTempFile(directory, prefix, suffix, PosixFilePermissions.asFileAttribute(FILE_MODE));
        Files.setPosixFilePermissions(file, FILE_MODE);
        return file;
    }

    /** @return the first directory above and including {@code directory} that others cannot pass, or {@code null} */
    static Path closedAncestor(Path directory) {
        for (Path d = directory.toAbsolutePath(); d != null; d = d.getParent()) {
            try {
                if (!Files.getPosixFilePermissions(d).contains(PosixFilePermission.OTHERS_EXECUTE)) {
                    return d;
                }
            } catch (IOException | UnsupportedOperationException e) {
                return null;
            }
        }
        return null;
    }

    private static boolean isTopology(Path xml) throws IOException {
        byte[] head = new byte[4096];
        int n;
        try (InputStream in = Files.newInputStream(xml)) {
            n = in.readNBytes(head, 0, head.length);
        }
        return new String(head, 0, n, StandardCharsets.UTF_8).contains("<topology");
    }

    private static String firstLine(Path errors) {
        try (BufferedReader r = Files.newBufferedReader(errors, StandardCharsets.UTF_8)) {
            String line = r.readLine();
            return line == null || line.isBlank() ? "" : ": " + line.trim();
        } catch (IOException e) {
            return "";
        }
    }

    private static void delete(Path file) {
        if (file != null) {
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                LOG.debug("cannot delete {}", file, e);
            }
        }
    }
}
