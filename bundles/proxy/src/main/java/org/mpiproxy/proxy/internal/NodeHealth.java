package org.mpiproxy.proxy.internal;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Set;

import org.mpiproxy.api.HealthResult;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.api.ProgramNames;
import org.mpiproxy.api.HealthResult.Status;

/** The node's health checks as pure functions of what they inspect. Thread-safe. */
final class NodeHealth {

    static final String LISTENING = "udp.listening";
    static final String PROGRAMS = "programs.";
    static final String KEY = "v2.key";
    static final String SHARED_MEMORY = "shm.free";
    static final String SERVING = "udp.serving";
    static final String DISK = "disk.";
    static final String CONFIG = "config";
    static final String IDENTITY = "identity";
    static final String HEAP = "heap";

    /** Reads the usable bytes of the file system holding an existing path. */
    @FunctionalInterface
    interface FreeSpace {
        long usableBytes(Path existing) throws IOException;
    }

    /**
     * The JVM's heap after its last garbage collection.
     *
     * @param used     bytes in use after the last collection (what a collection could not free)
     * @param max      the most the heap may grow to, -1 when it has no maximum
     * @param measured how {@code used} was measured, for the message
     */
    record Heap(long used, long max, String measured) {
    }

    /** Reads the heap's figures. */
    @FunctionalInterface
    interface HeapUsage {
        Heap read();
    }

    /**
     * The JVM's own figures: the heap pools' usage after their last collection, or, before any
     * collection (or where no pool tells), the heap in use now.
     */
    static final HeapUsage JVM_HEAP = () -> {
        long max = java.lang.management.ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getMax();
        long used = 0;
        boolean told = false;
        for (java.lang.management.MemoryPoolMXBean pool : java.lang.management.ManagementFactory.getMemoryPoolMXBeans()) {
            java.lang.management.MemoryUsage after = pool.getType() == java.lang.management.MemoryType.HEAP
                    ? pool.getCollectionUsage() : null;
            if (after != null) {
                used += after.getUsed();
                told = true;
            }
        }
        boolean collected = told && java.lang.management.ManagementFactory.getGarbageCollectorMXBeans().stream()
                .anyMatch(gc -> gc.getCollectionCount() > 0);
        return collected ? new Heap(used, max, "after the last collection")
                : new Heap(java.lang.management.ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed(),
                max, "now (no collection yet)");
    };

    /** The file system's own count. */
    static final FreeSpace FILE_STORE = existing -> Files.getFileStore(existing).getUsableSpace();

    /**
     * What the transport tells of its receive thread.
     *
     * @param name       the thread's name
     * @param alive      whether it runs ({@code false} from its death to its restart)
     * @param death      why it is dead, empty while it runs
     * @param busyMillis how long it has been inside the handler now, 0 when it is not
     * @param at         where it is now (its innermost frame outside the JDK), empty when unknown
     * @param restarts   how often it was restarted after dying
     * @param failures   failures the receive loop survived
     */
    record ServingThread(String name, boolean alive, String death, long busyMillis, String at, long restarts,
                         long failures) {
    }

    private NodeHealth() {
    }

    /**
     * @param address where the transport is bound, {@code null} when no transport runs
     */
    static HealthResult listening(InetSocketAddress address) {
        if (address == null) {
            return new HealthResult(LISTENING, Status.CRITICAL, "no UDP transport is running: check "
                    + "etc/org.mpiproxy.transport.udp.cfg and the log");
        }
        return new HealthResult(LISTENING, Status.OK, "listening on " + address.getAddress().getHostAddress() + ":"
                + address.getPort());
    }

    /**
     * @param kind      which launcher ({@code local}, {@code core})
     * @param directory its program directory, {@code null} when that launcher is not running
     */
    static HealthResult programs(String kind, Path directory) {
        String check = PROGRAMS + kind;
        if (directory == null) {
            return new HealthResult(check, Status.CRITICAL, "the " + kind + " launcher is not running");
        }
        if (!Files.isDirectory(directory)) {
            return new HealthResult(check, Status.CRITICAL, directory + " is not a directory");
        }
        if (!Files.isReadable(directory) || !Files.isExecutable(directory)) {
            return new HealthResult(check, Status.CRITICAL, directory + " cannot be read");
        }
        // the core launcher starts programs from their images, the local one runs executables;
        // an image is never a program itself
        boolean images = ProcessLauncher.KIND_CORE.equals(kind);
        int programs = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory)) {
            for (Path f : files) {
                String name = f.getFileName().toString();
                if (!Files.isRegularFile(f) || ProgramNames.isImage(name) != images) {
                    continue;
                }
                if (images ? Files.isReadable(f) : Files.isExecutable(f)) {
                    programs++;
                }
            }
        } catch (IOException e) {
            return new HealthResult(check, Status.CRITICAL, directory + " cannot be listed: " + e.getMessage());
        }
        if (programs == 0) {
            return new HealthResult(check, Status.CRITICAL, directory + (images
                    ? " holds no program image (<name>" + ProgramNames.IMAGE_SUFFIX + ")"
                    : " holds no executable program"));
        }
        return new HealthResult(check, Status.OK, programs + (images ? " program images in " : " programs in ")
                + directory);
    }

    /**
     * What the proxy tells of protocol v2's keys.
     *
     * @param enabled whether v2 is enabled
     * @param problem why v2 did not start, {@code null} when it runs (or is disabled)
     * @param files   the key files v2 serves with, the signing key first; empty when it does not
     */
    record V2Keys(boolean enabled, String problem, java.util.List<Path> files) {
    }

    /**
     * The key files v2 serves with, or the one configured for the check.
     *
     * @param keyFile the key file configured for the check, {@code null} for the proxy's own
     * @param proxy   what the proxy tells of its keys, {@code null} when no proxy runs
     */
    static HealthResult key(Path keyFile, V2Keys proxy) {
        if (keyFile != null) {
            return key(keyFile);
        }
        if (proxy == null) {
            return new HealthResult(KEY, Status.WARN, "the proxy is not running: its v2 key is unknown");
        }
        if (!proxy.enabled()) {
            return new HealthResult(KEY, Status.OK, "v2 is disabled (v1 only): no key needed");
        }
        if (proxy.problem() != null) {
            return new HealthResult(KEY, Status.CRITICAL, "v2 is not started: " + proxy.problem());
        }
        HealthResult worst = null;
        for (Path file : proxy.files()) {
            HealthResult r = key(file);
            if (worst == null || r.status().compareTo(worst.status()) > 0) {
                worst = r;
            }
        }
        return worst != null ? worst : new HealthResult(KEY, Status.CRITICAL, "v2 is not started");
    }

    /**
     * @param keyFile a key file
     */
    static HealthResult key(Path keyFile) {
        if (!Files.isRegularFile(keyFile) || !Files.isReadable(keyFile)) {
            return new HealthResult(KEY, Status.CRITICAL, keyFile + " is not a readable file");
        }
        try {
            Set<PosixFilePermission> p = Files.getPosixFilePermissions(keyFile);
            if (p.contains(PosixFilePermission.OTHERS_READ) || p.contains(PosixFilePermission.GROUP_READ)) {
                return new HealthResult(KEY, Status.WARN, keyFile + " can be read by other users");
            }
        } catch (UnsupportedOperationException | IOException e) {
            return new HealthResult(KEY, Status.WARN, "cannot read the permissions of " + keyFile);
        }
        try {
            // the floor the proxy applies at every change of its keys (ClusterKeys.loadStrong)
            String weak = org.mpiproxy.protocol.ClusterKeys.weakness(
                    org.mpiproxy.protocol.ClusterKeys.readKeyFile(keyFile));
            if (weak != null) {
                return new HealthResult(KEY, Status.CRITICAL, keyFile + " holds a weak key: it " + weak);
            }
        } catch (IllegalArgumentException e) {
            return new HealthResult(KEY, Status.CRITICAL, e.getMessage());
        }
        return new HealthResult(KEY, Status.OK, keyFile + " is readable by its owner only and holds a strong key");
    }

    /**
     * The local socket that gives local users job credentials (docs/protocol-v2.md 4.2).
     *
     * @param socket what {@link LocalSocketComponent#state()} tells, {@code null} when it does not run
     */
    static HealthResult identity(LocalSocketComponent.State socket) {
        if (socket == null) {
            return new HealthResult(IDENTITY, Status.WARN, "the local socket is not running: see the log");
        }
        if (socket.socket() == null) {
            return new HealthResult(IDENTITY, Status.OK, "local socket off");
        }
        if (socket.problem() != null) {
            return new HealthResult(IDENTITY, Status.WARN, socket.problem());
        }
        return new HealthResult(IDENTITY, Status.OK, "local socket " + socket.socket());
    }

    /**
     * The local socket (docs/protocol-v2.md 4.2) and MUNGE (4.3), which give users job credentials.
     *
     * @param socket       what {@link LocalSocketComponent#state()} tells, {@code null} when it does not run
     * @param mungeProblem why MUNGE does not work on this node ({@link org.mpiproxy.process.Munge#problem()}),
     *                     {@code null} when it does
     * @param mungeRequired whether users rely on MUNGE here ({@code munge.required}): then its absence WARNs
     */
    static HealthResult identity(LocalSocketComponent.State socket, String mungeProblem, boolean mungeRequired) {
        HealthResult local = identity(socket);
        if (mungeProblem == null) {
            return new HealthResult(IDENTITY, local.status(), local.message() + "; munge: ok");
        }
        return new HealthResult(IDENTITY, mungeRequired ? Status.WARN : local.status(), local.message()
                + "; munge: not available (" + mungeProblem + ")");
    }

    /**
     * @param base         the channel manager's base directory (or {@code null} when none runs);
     *                     its nearest existing ancestor is measured when it does not exist yet;
     *                     critical when it exists as another user's, writable by others, or a link
     * @param minFreeBytes below this the check is critical, below twice this a warning
     */
    static HealthResult sharedMemory(Path base, long minFreeBytes) {
        return sharedMemory(base, minFreeBytes, FILE_STORE);
    }

    /**
     * As {@link #sharedMemory(Path, long)}, with the free space read by {@code freeSpace}.
     */
    static HealthResult sharedMemory(Path base, long minFreeBytes, FreeSpace freeSpace) {
        if (base == null) {
            return new HealthResult(SHARED_MEMORY, Status.CRITICAL, "the channel manager is not running");
        }
        Path existing = base.toAbsolutePath();
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        if (existing == null) {
            return new HealthResult(SHARED_MEMORY, Status.CRITICAL, "no part of " + base + " exists");
        }
        // made again by another user while it was missing: the next job is refused there, say why now
        String unsafe = org.mpiproxy.api.PrivateDirectories.problem(base, base.toString());
        if (unsafe != null) {
            return new HealthResult(SHARED_MEMORY, Status.CRITICAL, unsafe);
        }
        long free;
        try {
            free = freeSpace.usableBytes(existing);
        } catch (IOException e) {
            return new HealthResult(SHARED_MEMORY, Status.CRITICAL, "cannot measure " + existing + ": "
                    + e.getMessage());
        }
        if (!Files.isWritable(existing)) {
            return new HealthResult(SHARED_MEMORY, Status.CRITICAL, existing + " is not writable");
        }
        String text = free + " bytes free for " + base + " (minimum " + minFreeBytes + ")";
        if (free < minFreeBytes) {
            return new HealthResult(SHARED_MEMORY, Status.CRITICAL, text);
        }
        if (free / 2 < minFreeBytes) {
            return new HealthResult(SHARED_MEMORY, Status.WARN, text);
        }
        return new HealthResult(SHARED_MEMORY, Status.OK, text);
    }

    /**
     * A directory the proxy writes into has room: the nearest existing ancestor is measured when
     * it does not exist yet.
     *
     * @param name          the check's name after {@code disk.} ({@code logs}, {@code state}, {@code staged})
     * @param what          what the directory is, for the message ({@code log directory})
     * @param directory     the directory, {@code null} when unknown (the proxy is not running)
     * @param warnBelow     below this many free bytes the check warns
     * @param criticalBelow below this many free bytes it is critical
     * @param freeSpace     reads the free bytes
     */
    static HealthResult freeSpace(String name, String what, Path directory, long warnBelow, long criticalBelow,
                                  FreeSpace freeSpace) {
        String check = DISK + name;
        if (directory == null) {
            return new HealthResult(check, Status.WARN, "the proxy is not running: its " + what + " is unknown");
        }
        Path existing = directory.toAbsolutePath();
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        if (existing == null) {
            return new HealthResult(check, Status.CRITICAL, "no part of the " + what + " " + directory + " exists");
        }
        long free;
        try {
            free = freeSpace.usableBytes(existing);
        } catch (IOException e) {
            return new HealthResult(check, Status.CRITICAL, "cannot measure the " + what + " " + directory + ": "
                    + e.getMessage());
        }
        if (!Files.isWritable(existing)) {
            return new HealthResult(check, Status.CRITICAL, "the " + what + " " + existing + " is not writable");
        }
        String text = free + " bytes free for the " + what + " " + directory + " (warn below " + warnBelow
                + ", critical below " + criticalBelow + ")";
        if (free < criticalBelow) {
            return new HealthResult(check, Status.CRITICAL, "nearly full: " + text);
        }
        if (free < warnBelow) {
            return new HealthResult(check, Status.WARN, "filling up: " + text);
        }
        return new HealthResult(check, Status.OK, text);
    }

    /**
     * The heap has room: what the last garbage collection could not free, as a share of the most
     * the heap may grow to. A proxy short of heap stalls in collections, then fails with
     * {@code OutOfMemoryError}.
     *
     * @param heap            the figures, {@code null} when they cannot be read
     * @param warnPercent     above this share the check warns
     * @param criticalPercent above this share it is critical
     */
    static HealthResult heap(Heap heap, int warnPercent, int criticalPercent) {
        if (heap == null) {
            return new HealthResult(HEAP, Status.WARN, "cannot read the heap's usage");
        }
        long mib = 1L << 20;
        if (heap.max() <= 0) {
            return new HealthResult(HEAP, Status.OK, heap.used() / mib + " MiB used " + heap.measured()
                    + "; the heap has no maximum");
        }
        long percent = Math.round(heap.used() * 100.0 / heap.max());
        String text = heap.used() / mib + " MiB of " + heap.max() / mib + " MiB used " + heap.measured() + " ("
                + percent + "%; warn above " + warnPercent + "%, critical above " + criticalPercent + "%)";
        if (heap.used() * 100.0 > (double) criticalPercent * heap.max()) {
            return new HealthResult(HEAP, Status.CRITICAL, "nearly full: " + text);
        }
        if (heap.used() * 100.0 > (double) warnPercent * heap.max()) {
            return new HealthResult(HEAP, Status.WARN, "filling up: " + text);
        }
        return new HealthResult(HEAP, Status.OK, text);
    }

    /**
     * The transport's receive thread serves: it runs, and is not stuck inside the handler.
     *
     * @param thread      what the transport tells, {@code null} when no transport runs
     * @param stuckMillis longer than this inside the handler is stuck
     */
    static HealthResult serving(ServingThread thread, long stuckMillis) {
        if (thread == null) {
            return new HealthResult(SERVING, Status.CRITICAL, "no receive thread: no UDP transport is running");
        }
        String history = " (" + thread.restarts() + " restarts, " + thread.failures() + " failures survived)";
        if (!thread.alive()) {
            return new HealthResult(SERVING, Status.CRITICAL, thread.name() + " died: " + thread.death()
                    + "; it is being restarted" + history);
        }
        if (thread.busyMillis() > stuckMillis) {
            return new HealthResult(SERVING, Status.CRITICAL, thread.name() + " stuck in the handler for "
                    + thread.busyMillis() / 1000 + " s (limit " + stuckMillis / 1000 + " s)"
                    + (thread.at().isEmpty() ? "" : " at " + thread.at()) + history);
        }
        return new HealthResult(SERVING, Status.OK, thread.name() + " serving" + history);
    }

    /**
     * The configurations the components refused or hold unknown keys in: {@value #CONFIG} OK when
     * there are none, else a check {@code config.<pid>} per PID, CRITICAL while its component has
     * no good configuration (it does not run), WARN while it runs on its last good one or only
     * has unknown keys.
     *
     * @param reports what {@link org.mpiproxy.api.config.ConfigurationReports#reports()} says
     */
    static java.util.List<HealthResult> configuration(java.util.List<org.mpiproxy.api.config.ConfigurationReports.Report> reports) {
        if (reports.isEmpty()) {
            return java.util.List.of(new HealthResult(CONFIG, Status.OK,
                    "every configuration is in force as given, with no unknown key"));
        }
        java.util.List<HealthResult> results = new java.util.ArrayList<>();
        for (org.mpiproxy.api.config.ConfigurationReports.Report r : reports) {
            java.util.List<String> lines = new java.util.ArrayList<>();
            if (r.refusal() != null) {
                lines.add(r.refusal());
            }
            lines.addAll(r.unknownKeys());
            Status status = r.refusal() != null && !r.started() ? Status.CRITICAL : Status.WARN;
            results.add(new HealthResult(CONFIG + "." + r.pid(), status, String.join(" | ", lines)));
        }
        return results;
    }
}
