package org.mpiproxy.process.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

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
 * {@value KeeperFiles#OWNER} file (a later proxy that took the jobs over). When nobody has answered
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
    private volatile int child = -1;
    private volatile boolean childEnded;
    private volatile int childStatus;
    /** When the JVM that answers for the orphans was last seen running (nanoTime), or while the command runs. */
    private volatile long ownerSeen = System.nanoTime();
    /** Set when the orphans are to be stopped now (the window passed, or a signal after the command ended). */
    private volatile boolean stopping;

    NodeKeeper(LibC libc, Path directory) {
        this.libc = libc;
        this.directory = directory;
        this.self = ProcessHandle.current().pid();
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
        child = spawn(command);
        for (String name : new String[] {"TERM", "INT", "HUP"}) {
            handle(name);
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
                childStatus = value;
                childEnded = true;
                ownerSeen = System.nanoTime();
                int left = orphans().size();
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

    /** Every {@link #WATCH_MILLIS}: is anyone answering for the orphans, and has the window passed? */
    private void watch() {
        long stoppedAt = -1;
        while (true) {
            sleep(WATCH_MILLIS);
            if (!childEnded) {
                continue;
            }
            long[] policy = KeeperFiles.readPolicy(directory);
            long now = System.nanoTime();
            if (ownerRuns()) {
                ownerSeen = now;
            }
            if (!stopping && now - ownerSeen > TimeUnit.SECONDS.toNanos(policy[0])) {
                stopping = true;
            }
            if (stopping) {
                List<ProcStat> left = orphans();
                if (left.isEmpty()) {
                    continue;
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
    }

    /** @return whether the JVM named in the owner file runs */
    private boolean ownerRuns() {
        long[] owner = KeeperFiles.readOwner(directory);
        if (owner == null) {
            return false;
        }
        try {
            return ProcStat.isRunning(owner[0], owner[1]);
        } catch (IOException e) {
            return true;
        }
    }

    private void signalAll(List<ProcStat> processes, int signal) {
        for (ProcStat p : processes) {
            // a rank leads its group: the whole group goes; anything else alone
            libc.kill((int) (p.pgrp() == p.pid() ? -p.pid() : p.pid()), signal);
        }
    }

    /** @return the keeper's running children other than its command */
    private List<ProcStat> orphans() {
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
                    libc.kill(child, signal.getNumber());
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
