package org.mpiproxy.process.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import com.sun.jna.Function;
import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import com.sun.jna.StringArray;
import com.sun.jna.ptr.IntByReference;

import org.mpiproxy.process.KeeperFiles;
import org.mpiproxy.process.ProcStat;

/**
 * The node keeper: the parent of the Karaf JVM, and what keeps a node's ranks when that JVM ends.
 * <p>
 * The distribution's {@code bin/setenv} runs Karaf under it:
 * {@code java -cp <process bundle>:<jna> org.mpiproxy.process.internal.NodeKeeper <root> <command...>}.
 * The keeper makes itself a child subreaper ({@code prctl(PR_SET_CHILD_SUBREAPER)}), spawns the
 * command with {@value KeeperFiles#DIR_ENV} naming its directory {@code <root>/keeper-<pid>}, and
 * from then on reaps every child it has. While the JVM runs, the JVM is the ranks' parent and the
 * keeper costs nothing on the launch path. When the JVM ends (an orderly stop, a crash, a
 * {@code kill -9}), its ranks become the keeper's children: the keeper reaps each one that ends and
 * writes its exact status to {@code exit-<pid>-<start time>} (for process group leaders: a rank
 * leads its own), where the next proxy finds it.
 * <p>
 * Who answers for the orphans: the keeper's own command while it runs, then the JVM named in the
 * {@value KeeperFiles#OWNER} file (a later proxy that took the jobs over; the keeper says when it
 * first sees each one running). When nobody has answered
 * for them for {@code survive.seconds} of the {@value KeeperFiles#POLICY} file (written by the
 * proxy; none written means 0), the keeper stops every orphan's process group (SIGTERM, SIGKILL
 * after {@code stop.grace.seconds}). It exits with its command's status once it has no child left.
 * <p>
 * Signals: SIGTERM, SIGINT and SIGHUP go on to the command while it runs; once it has ended, one
 * of them stops the orphans at once. Runs outside OSGi on one JVM with a small heap; every
 * message is one line on standard error.
 */
public final class NodeKeeper {

    private static final int PR_SET_CHILD_SUBREAPER = 36;
    private static final int P_ALL = 0;
    private static final int WEXITED = 4;
    private static final int WNOWAIT = 0x01000000;
    private static final int ECHILD = 10;
    private static final int EINTR = 4;
    private static final int SIGKILL = 9;
    private static final int SIGTERM = 15;
    private static final short POSIX_SPAWN_SETSIGMASK = 0x08;
    /** {@code siginfo_t}: 128 bytes; {@code si_pid} at offset 16 on Linux. */
    private static final int SIGINFO_BYTES = 128;
    private static final int SI_PID = 16;
    private static final int OPAQUE_BYTES = 1024;
    private static final int SET_BYTES = 128;
    /** How often the watch looks at the owner and the window. */
    private static final long WATCH_MILLIS = 250;

    /** The C library's functions the keeper calls. */
    interface LibC extends Library {
        int prctl(int option, long arg2, long arg3, long arg4, long arg5);

        int waitid(int idType, int id, Pointer info, int options);

        int waitpid(int pid, IntByReference status, int options);

        int kill(int pid, int signal);

        int posix_spawnp(IntByReference pid, String file, Pointer fileActions, Pointer attributes, StringArray argv,
                         StringArray envp);

        int posix_spawn_file_actions_init(Pointer actions);

        int posix_spawn_file_actions_destroy(Pointer actions);

        int posix_spawnattr_init(Pointer attributes);

        int posix_spawnattr_setflags(Pointer attributes, short flags);

        int posix_spawnattr_setsigmask(Pointer attributes, Pointer mask);

        int posix_spawnattr_destroy(Pointer attributes);

        int sigemptyset(Pointer set);

        String strerror(int error);
    }

    private final LibC libc;
    private final Path directory;
    private final long self;
    /** The time the window is counted in, {@link System#nanoTime()}'s. */
    private final LongSupplier clock;
    /** The keeper's running children other than its command. */
    private final Supplier<List<ProcStat>> orphans;
    /** The command's pid once spawned; guarded by {@code this} while it is not. */
    private volatile int child = -1;
    /** A signal that came before the command was spawned, passed on to it once it is; guarded by {@code this}. */
    private int pendingSignal;
    private volatile boolean childEnded;
    private volatile int childStatus;
    /** When the JVM that answers for the orphans was last seen running ({@link #clock}), or while the command runs. */
    private volatile long ownerSeen;
    /** Set when the orphans are to be stopped now (the window passed, or a signal after the command ended). */
    private volatile boolean stopping;
    /** Watch thread only: when the orphans were sent SIGTERM ({@link #clock}), or -1. */
    private long stoppedAt = -1;
    /** Watch thread only: the owner (pid, start time) last said to answer for the orphans. */
    private long[] announcedOwner;

    NodeKeeper(LibC libc, Path directory) {
        this(libc, directory, System::nanoTime, null);
    }

    /**
     * @param clock   the time the window and the grace are counted in (nanoseconds)
     * @param orphans the keeper's running children other than its command; {@code null} for its own
     */
    NodeKeeper(LibC libc, Path directory, LongSupplier clock, Supplier<List<ProcStat>> orphans) {
        this.libc = libc;
        this.directory = directory;
        this.self = ProcessHandle.current().pid();
        this.clock = clock;
        this.orphans = orphans != null ? orphans : this::children;
        this.ownerSeen = clock.getAsLong();
    }

    /**
     * @param args the directory that holds the keepers' directories, then the command and its arguments
     */
    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: NodeKeeper <keepers directory> <command> [argument...]");
            System.exit(64);
        }
        LibC libc = Native.load("c", LibC.class);
        Path root = Path.of(args[0]);
        Path directory = root.resolve(KeeperFiles.KEEPER_PREFIX + ProcessHandle.current().pid());
        // ended keepers' directories stay: their exit records are the next proxy's to read and remove
        Files.createDirectories(directory);
        NodeKeeper keeper = new NodeKeeper(libc, directory);
        List<String> command = List.of(args).subList(1, args.length);
        System.exit(keeper.run(command));
    }

    int run(List<String> command) throws IOException {
        if (libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
            log("cannot become a child subreaper (" + libc.strerror(Native.getLastError())
                    + "): ranks that outlive the JVM are not kept");
        }
        // before the spawn: a signal that comes while the command starts goes on to it, instead of
        // ending the keeper (the JVM's default) and leaving the command without its keeper
        for (String name : new String[] {"TERM", "INT", "HUP"}) {
            handle(name);
        }
        int pid = spawn(command);
        int pending;
        synchronized (this) {
            child = pid;
            pending = pendingSignal;
        }
        if (pending != 0) {
            libc.kill(pid, pending);
        }
        Thread watch = new Thread(this::watch, "mpiproxy-keeper-watch");
        watch.setDaemon(true);
        watch.start();
        reapAll();
        try {
            Files.deleteIfExists(directory.resolve(KeeperFiles.POLICY));
            Files.deleteIfExists(directory.resolve(KeeperFiles.OWNER));
            try (var files = Files.list(directory)) {
                if (files.findAny().isEmpty()) {
                    Files.deleteIfExists(directory);
                }
            }
        } catch (IOException e) {
            // the next keeper removes it
        }
        return childStatus;
    }

    /** Reaps children until there is none left. */
    private void reapAll() {
        Memory info = new Memory(SIGINFO_BYTES);
        IntByReference status = new IntByReference();
        while (true) {
            info.clear();
            if (libc.waitid(P_ALL, 0, info, WEXITED | WNOWAIT) != 0) {
                int errno = Native.getLastError();
                if (errno == EINTR) {
                    continue;
                }
                if (errno == ECHILD) {
                    return;
                }
                log("waitid: " + libc.strerror(errno));
                sleep(WATCH_MILLIS);
                continue;
            }
            int pid = info.getInt(SI_PID);
            if (pid <= 0) {
                continue;
            }
            // still a zombie: its stat names its group and start time
            Optional<ProcStat> stat = stat(pid);
            if (libc.waitpid(pid, status, 0) != pid) {
                continue;
            }
            int value = exitValue(status.getValue());
            if (pid == child) {
                commandEnded(value);
                int left = orphans.get().size();
                if (left > 0) {
                    long[] policy = KeeperFiles.readPolicy(directory);
                    log("the JVM ended (" + value + "); " + left + " process(es) kept for up to " + policy[0]
                            + " s for a proxy to take them over");
                }
            } else if (stat.isPresent() && stat.get().pgrp() == pid) {
                try {
                    KeeperFiles.writeExit(directory, pid, stat.get().startTime(), value);
                } catch (IOException e) {
                    log("cannot record the exit of " + pid + ": " + e);
                }
            }
        }
    }

    /**
     * The command ended with this status: from now on the window counts. Reaping thread (or a test).
     */
    void commandEnded(int status) {
        childStatus = status;
        ownerSeen = clock.getAsLong();
        // after ownerSeen: the watch never sees the end with the time of an earlier owner
        childEnded = true;
    }

    /** Every {@link #WATCH_MILLIS}: is anyone answering for the orphans, and has the window passed? */
    private void watch() {
        while (true) {
            sleep(WATCH_MILLIS);
            look();
        }
    }

    /** One look of the watch; watch thread (or a test). */
    void look() {
        if (!childEnded) {
            return;
        }
        long[] policy = KeeperFiles.readPolicy(directory);
        long now = clock.getAsLong();
        long[] owner = runningOwner();
        if (owner != null) {
            ownerSeen = now;
            if (announcedOwner == null || announcedOwner[0] != owner[0] || announcedOwner[1] != owner[1]) {
                announcedOwner = owner;
                log("pid " + owner[0] + " answers for the kept processes");
            }
        }
        if (!stopping && now - ownerSeen > TimeUnit.SECONDS.toNanos(policy[0])) {
            stopping = true;
        }
        if (stopping) {
            List<ProcStat> left = orphans.get();
            if (left.isEmpty()) {
                return;
            }
            if (stoppedAt < 0) {
                stoppedAt = now;
                log("nobody took " + left.size() + " kept process(es) over; stopping them");
                signalAll(left, SIGTERM);
            } else if (now - stoppedAt > TimeUnit.SECONDS.toNanos(policy[1])) {
                signalAll(left, SIGKILL);
            }
        }
    }

    /** @return the pid and start time of the JVM named in the owner file when it runs, else {@code null} */
    private long[] runningOwner() {
        long[] owner = KeeperFiles.readOwner(directory);
        if (owner == null) {
            return null;
        }
        try {
            return ProcStat.isRunning(owner[0], owner[1]) ? owner : null;
        } catch (IOException e) {
            return owner;
        }
    }

    private void signalAll(List<ProcStat> processes, int signal) {
        for (ProcStat p : processes) {
            // a rank leads its group: the whole group goes; anything else alone
            libc.kill((int) (p.pgrp() == p.pid() ? -p.pid() : p.pid()), signal);
        }
    }

    /** @return the keeper's running children other than its command */
    private List<ProcStat> children() {
        List<ProcStat> found = new ArrayList<>();
        ProcessHandle.current().children().forEach(h -> {
            if (h.pid() != child) {
                stat(h.pid()).filter(s -> s.ppid() == self && s.isRunning()).ifPresent(found::add);
            }
        });
        return found;
    }

    private int spawn(List<String> command) throws IOException {
        Memory actions = new Memory(OPAQUE_BYTES);
        Memory attributes = new Memory(OPAQUE_BYTES);
        Memory empty = new Memory(SET_BYTES);
        check(libc.posix_spawn_file_actions_init(actions), "posix_spawn_file_actions_init");
        check(libc.posix_spawnattr_init(attributes), "posix_spawnattr_init");
        try {
            Function closeFrom = NativeLibrary.getInstance("c").getFunction("posix_spawn_file_actions_addclosefrom_np");
            check(closeFrom.invokeInt(new Object[] {actions, 3}), "posix_spawn_file_actions_addclosefrom_np");
        } catch (UnsatisfiedLinkError e) {
            // glibc older than 2.34: the command inherits this JVM's descriptors
        }
        // the command gets an empty signal mask; ignored signals (nohup's SIGHUP) stay ignored
        libc.sigemptyset(empty);
        check(libc.posix_spawnattr_setsigmask(attributes, empty), "posix_spawnattr_setsigmask");
        check(libc.posix_spawnattr_setflags(attributes, POSIX_SPAWN_SETSIGMASK), "posix_spawnattr_setflags");
        List<String> env = new ArrayList<>();
        for (Map.Entry<String, String> e : System.getenv().entrySet()) {
            if (!e.getKey().equals(KeeperFiles.DIR_ENV)) {
                env.add(e.getKey() + "=" + e.getValue());
            }
        }
        env.add(KeeperFiles.DIR_ENV + "=" + directory);
        try {
            IntByReference pid = new IntByReference();
            int result = libc.posix_spawnp(pid, command.get(0), actions, attributes,
                    new StringArray(command.toArray(new String[0])), new StringArray(env.toArray(new String[0])));
            if (result != 0) {
                throw new IOException(command.get(0) + ": " + libc.strerror(result));
            }
            return pid.getValue();
        } finally {
            libc.posix_spawnattr_destroy(attributes);
            libc.posix_spawn_file_actions_destroy(actions);
        }
    }

    @SuppressWarnings("removal")
    private void handle(String name) {
        try {
            sun.misc.Signal.handle(new sun.misc.Signal(name), signal -> {
                if (!childEnded) {
                    int pid;
                    synchronized (this) {
                        pid = child;
                        if (pid < 0) {
                            pendingSignal = signal.getNumber();
                            return;
                        }
                    }
                    libc.kill(pid, signal.getNumber());
                } else if (!stopping) {
                    log("SIG" + name + ": stopping the kept processes now");
                    stopping = true;
                }
            });
        } catch (IllegalArgumentException e) {
            // the JVM reserves it (e.g. with -Xrs): the default action stays
        }
    }

    private Optional<ProcStat> stat(long pid) {
        try {
            return ProcStat.read(pid);
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private void check(int result, String what) throws IOException {
        if (result != 0) {
            throw new IOException(what + ": " + libc.strerror(result));
        }
    }

    private void log(String message) {
        System.err.println("mpiproxy keeper " + self + ": " + message);
        System.err.flush();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * @param status a {@code waitpid} status
     * @return the exit code, or 128 + the signal that ended the process
     */
    static int exitValue(int status) {
        int signal = status & 0x7f;
        return signal == 0 ? (status >> 8) & 0xff : 0x80 + signal;
    }
}
