package org.mpiproxy.process;

import java.io.IOException;
import java.io.InputStream;
import java.util.List;

import com.sun.jna.Function;
import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import com.sun.jna.StringArray;
import com.sun.jna.ptr.IntByReference;

import org.mpiproxy.api.RankIdentity;

/**
 * Starts a rank with one {@code exec}: glibc's {@code posix_spawnp} called through JNA, instead
 * of Java's {@code ProcessBuilder} (which execs {@code jspawnhelper} first) followed by the
 * {@code setsid} and {@code taskset} programs (one exec each). The attributes do their work:
 * {@code POSIX_SPAWN_SETSID} makes the rank lead its own session and process group, every signal
 * gets its default action and an empty mask (the JVM's dispositions are not a rank's), standard
 * input is {@code /dev/null}, standard output and error are pipes, and every other descriptor of
 * the JVM is closed in the child ({@code posix_spawn_file_actions_addclosefrom_np}, glibc 2.34).
 * A rank pinned to a core inherits the spawning thread's CPU affinity, set around the call. The
 * exit is learnt through the rank's pidfd by the one {@link ExitWatch} thread (or by {@code waitpid}
 * on a reaper thread of its own, without pidfds) and reported as Java does: the exit code, or 128 +
 * the signal number. The output pipes stay descriptors ({@link PipeInputStream}) for the
 * {@link OutputPoller}.
 * <p>
 * {@link #available()} says whether it works here (Linux with glibc 2.34 or later, JNA loaded) and
 * is not turned off ({@value #ENABLE_PROPERTY}{@code =false}); otherwise {@link RankProcessStarter}
 * spawns through {@code ProcessBuilder} with {@code setsid} and {@code taskset}.
 * {@link #signal} sends a signal with {@code kill(2)}, so stopping a process group spawns no
 * {@code kill} program. Thread-safe.
 */
final class NativeSpawn {

    /** glibc's {@code POSIX_SPAWN_SETSIGDEF}. */
    static final short SETSIGDEF = 0x04;
    /** glibc's {@code POSIX_SPAWN_SETSIGMASK}. */
    static final short SETSIGMASK = 0x08;
    /** glibc's {@code POSIX_SPAWN_SETSID} (2.26 and later). */
    static final short SETSID = 0x80;
    /** Room for {@code posix_spawnattr_t} (336 bytes on x86_64) and {@code posix_spawn_file_actions_t} (80). */
    private static final int OPAQUE_BYTES = 1024;
    /** {@code sigset_t} and {@code cpu_set_t}: 128 bytes each in glibc. */
    private static final int SET_BYTES = 128;
    private static final int O_RDONLY = 0;
    private static final int O_CLOEXEC = 0x80000;
    /** The system property that turns the native path off ({@code false}); on when unset. */
    static final String ENABLE_PROPERTY = "mpiproxy.spawn.native";
    static final int EINTR = 4;
    private static final int ESRCH = 3;
    static final int SIGTERM = 15;
    static final int SIGKILL = 9;

    /** The C library's functions this class calls. */
    interface LibC extends Library {
        int posix_spawnp(IntByReference pid, String file, Pointer fileActions, Pointer attributes, StringArray argv,
                         StringArray envp);

        int posix_spawn_file_actions_init(Pointer actions);

        int posix_spawn_file_actions_addopen(Pointer actions, int fd, String path, int flags, int mode);

        int posix_spawn_file_actions_adddup2(Pointer actions, int fd, int newFd);

        int posix_spawn_file_actions_destroy(Pointer actions);

        int posix_spawnattr_init(Pointer attributes);

        int posix_spawnattr_setflags(Pointer attributes, short flags);

        int posix_spawnattr_setsigmask(Pointer attributes, Pointer mask);

        int posix_spawnattr_setsigdefault(Pointer attributes, Pointer signals);

        int posix_spawnattr_destroy(Pointer attributes);

        int sigemptyset(Pointer set);

        int sigfillset(Pointer set);

        int pipe2(int[] fds, int flags);

        int close(int fd);

        long read(int fd, Pointer buffer, long count);

        int waitpid(int pid, IntByReference status, int options);

        int kill(int pid, int signal);

        int sched_getaffinity(int pid, long size, Pointer mask);

        int sched_setaffinity(int pid, long size, Pointer mask);

        String strerror(int error);
    }

    private static final NativeSpawn INSTANCE = load();

    private final LibC libc;
    private final Function closeFrom;
    private final Function addChdir;
    private final String why;
    /** Learns the exits, {@code null} for a waiting thread per process ({@link NativeProcess}). */
    private final ExitWatch exits;

    private NativeSpawn(LibC libc, Function closeFrom, Function addChdir, String why, ExitWatch exits) {
        this.libc = libc;
        this.closeFrom = closeFrom;
        this.addChdir = addChdir;
        this.why = why;
        this.exits = exits;
    }

    /** @return this spawner with its processes' exits learnt by {@code exits} ({@code null}: a thread each) */
    NativeSpawn withExits(ExitWatch exits) {
        return new NativeSpawn(libc, closeFrom, addChdir, why, exits);
    }

    private static NativeSpawn load() {
        if (!System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            return new NativeSpawn(null, null, null, "not Linux", null);
        }
        try {
            LibC libc = Native.load("c", LibC.class);
            Function closeFrom = NativeLibrary.getInstance("c").getFunction("posix_spawn_file_actions_addclosefrom_np");
            Function addChdir = NativeLibrary.getInstance("c").getFunction("posix_spawn_file_actions_addchdir_np");
            return new NativeSpawn(libc, closeFrom, addChdir, null, ExitWatch.shared());
        } catch (LinkageError | RuntimeException e) {
            // no JNA bundle, no native library for this platform, or a glibc older than 2.34
            return new NativeSpawn(null, null, null, "glibc's posix_spawn through JNA is not available: " + e, null);
        }
    }

    /** @return the spawner, whether {@link #available()} or not */
    static NativeSpawn instance() {
        return INSTANCE;
    }

    /**
     * @return the spawner when it is {@link #available()}, else {@code null}; also {@code null}
     *         when JNA's classes cannot be loaded at all (a class path without JNA)
     */
    static NativeSpawn ifAvailable() {
        try {
            return INSTANCE.available() ? INSTANCE : null;
        } catch (LinkageError e) {
            return null;
        }
    }

    /** @return whether ranks can be spawned (and groups signalled) natively here */
    boolean available() {
        return why == null && !"false".equalsIgnoreCase(System.getProperty(ENABLE_PROPERTY, "").trim());
    }

    /** @return why {@link #available()} is false, or {@code null} */
    String unavailableReason() {
        return why != null ? why : available() ? null : ENABLE_PROPERTY + " is false";
    }

    /**
     * Spawns a process in a session and process group of its own.
     *
     * @param argv the command line; {@code argv[0]} is looked up in the proxy's {@code PATH} when
     *             it has no slash
     * @param envp the complete environment, {@code NAME=value} each
     * @param cpu  the CPU to pin it to, or -1 to inherit the caller's affinity
     * @return the running process, its output in pipes
     * @throws IOException with the C library's reason when it cannot be spawned
     */
    Process spawn(List<String> argv, List<String> envp, int cpu) throws IOException {
        return spawn(argv, envp, cpu, null, null, null);
    }

    /**
     * As {@link #spawn(List, List, int)}, with standard output and error going to FIFOs the rank
     * holds open for reading and writing ({@link RankFifos}) instead of pipes.
     *
     * @param outFifo the FIFO of standard output, {@code null} for a pipe
     * @param errFifo the FIFO of standard error ({@code null} exactly when {@code outFifo} is)
     */
    Process spawn(List<String> argv, List<String> envp, int cpu, java.nio.file.Path outFifo,
                  java.nio.file.Path errFifo) throws IOException {
        return spawn(argv, envp, cpu, null, outFifo, errFifo);
    }

    /**
     * As {@link #spawn(List, List, int, java.nio.file.Path, java.nio.file.Path)}, started in
     * {@code directory} ({@code posix_spawn_file_actions_addchdir_np}, glibc 2.29), {@code null}
     * for the proxy's own.
     */
    Process spawn(List<String> argv, List<String> envp, int cpu, java.nio.file.Path directory,
                  java.nio.file.Path outFifo, java.nio.file.Path errFifo) throws IOException {
        return spawn(argv, envp, cpu, directory, outFifo, errFifo, null);
    }

    /**
     * As {@link #spawn(List, List, int, java.nio.file.Path, java.nio.file.Path, java.nio.file.Path)},
     * the FIFOs given to the rank's user.
     *
     * @param user the user the FIFOs go to ({@link RankFifos#create(java.nio.file.Path, RankIdentity)}),
     *             {@code null} to keep them this process's user's
     */
    Process spawn(List<String> argv, List<String> envp, int cpu, java.nio.file.Path directory,
                  java.nio.file.Path outFifo, java.nio.file.Path errFifo, RankIdentity user) throws IOException {
        String dir = directory == null ? null : directory.toString();
        if (outFifo != null) {
            return spawnToFifos(argv, envp, cpu, dir, outFifo, errFifo, user);
        }
        int[] out = pipe();
        int[] err;
        try {
            err = pipe();
        } catch (IOException e) {
            closeAll(out);
            throw e;
        }
        boolean spawned = false;
        try {
            int pid = spawnWith(argv, envp, cpu, actions -> {
                check(libc.posix_spawn_file_actions_adddup2(actions, out[1], 1), "posix_spawn_file_actions_adddup2");
                check(libc.posix_spawn_file_actions_adddup2(actions, err[1], 2), "posix_spawn_file_actions_adddup2");
            }, chdir(dir));
            spawned = true;
            libc.close(out[1]);
            libc.close(err[1]);
            return new NativeProcess(libc, pid, new PipeInputStream(libc, out[0]),
                    new PipeInputStream(libc, err[0]), exits);
        } finally {
            if (!spawned) {
                closeAll(out);
                closeAll(err);
            }
        }
    }

    private Process spawnToFifos(List<String> argv, List<String> envp, int cpu, String dir, java.nio.file.Path outFifo,
                                 java.nio.file.Path errFifo, RankIdentity user) throws IOException {
        // the reading ends first: a rank that ends at once still leaves its output to read
        RankFifos.FifoInputStream out = RankFifos.create(outFifo, user);
        RankFifos.FifoInputStream err;
        try {
            err = RankFifos.create(errFifo, user);
        } catch (IOException e) {
            out.close();
            throw e;
        }
        boolean spawned = false;
        int outEnd = -1;
        int errEnd = -1;
        try {
            // the rank's ends opened here, checked to be the FIFOs just made, not reopened by path in the child
            outEnd = RankFifos.openRankEnd(out);
            errEnd = RankFifos.openRankEnd(err);
            int rankOut = outEnd;
            int rankErr = errEnd;
            int pid = spawnWith(argv, envp, cpu, actions -> {
                check(libc.posix_spawn_file_actions_adddup2(actions, rankOut, 1), "posix_spawn_file_actions_adddup2");
                check(libc.posix_spawn_file_actions_adddup2(actions, rankErr, 2), "posix_spawn_file_actions_adddup2");
            }, chdir(dir));
            spawned = true;
            return new NativeProcess(libc, pid, out, err, exits);
        } finally {
            if (outEnd >= 0) {
                RankFifos.close(outEnd);
            }
            if (errEnd >= 0) {
                RankFifos.close(errEnd);
            }
            if (!spawned) {
                out.close();
                err.close();
            }
        }
    }

    /**
     * Spawns a process that holds the reading ends of FIFOs open for {@code seconds} and then ends:
     * while the JVM restarts, the output a rank wrote before it ended stays in its FIFO for the next
     * proxy (a FIFO's data goes with its last open descriptor). It leads a session of its own; the
     * next proxy stops it once it has opened the FIFOs itself.
     *
     * @param fifos   the FIFOs
     * @param seconds how long it holds them
     * @return its pid
     * @throws IOException when it cannot be spawned
     */
    long hold(List<java.nio.file.Path> fifos, long seconds) throws IOException {
        return spawnWith(List.of("sleep", Long.toString(Math.max(1, seconds))), List.of("PATH=/usr/bin:/bin"), -1, null,
                actions -> {
                    int fd = 3;
                    for (java.nio.file.Path fifo : fifos) {
                        check(libc.posix_spawn_file_actions_addopen(actions, fd++, fifo.toString(),
                                RankFifos.O_RDONLY | RankFifos.O_NONBLOCK | RankFifos.O_NOFOLLOW, 0),
                                "posix_spawn_file_actions_addopen " + fifo);
                    }
                });
    }

    /** @return the action that changes into {@code dir} (after every descriptor is in place), {@code null} for none */
    private FileActions chdir(String dir) {
        if (dir == null) {
            return null;
        }
        return actions -> check(addChdir.invokeInt(new Object[] {actions, dir}),
                "posix_spawn_file_actions_addchdir_np " + dir);
    }

    /** File actions beyond standard input and the closing of the JVM's descriptors. */
    private interface FileActions {
        void add(Pointer actions) throws IOException;
    }

    /**
     * Spawns a process in a session of its own with default signal actions, an empty signal mask,
     * standard input from {@code /dev/null} and no descriptor of the JVM.
     *
     * @param beforeClose actions on the JVM's descriptors (duplicating a pipe's end), or {@code null}
     * @param afterClose  actions that open descriptors of their own, or {@code null}
     */
    private int spawnWith(List<String> argv, List<String> envp, int cpu, FileActions beforeClose,
                          FileActions afterClose) throws IOException {
        Memory actions = new Memory(OPAQUE_BYTES);
        Memory attributes = new Memory(OPAQUE_BYTES);
        Memory empty = new Memory(SET_BYTES);
        Memory all = new Memory(SET_BYTES);
        check(libc.posix_spawn_file_actions_init(actions), "posix_spawn_file_actions_init");
        try {
            check(libc.posix_spawnattr_init(attributes), "posix_spawnattr_init");
            try {
                check(libc.posix_spawn_file_actions_addopen(actions, 0, "/dev/null", O_RDONLY, 0),
                        "posix_spawn_file_actions_addopen /dev/null");
                if (beforeClose != null) {
                    beforeClose.add(actions);
                }
                check(closeFrom.invokeInt(new Object[] {actions, 3}), "posix_spawn_file_actions_addclosefrom_np");
                if (afterClose != null) {
                    afterClose.add(actions);
                }
                libc.sigemptyset(empty);
                libc.sigfillset(all);
                check(libc.posix_spawnattr_setsigmask(attributes, empty), "posix_spawnattr_setsigmask");
                check(libc.posix_spawnattr_setsigdefault(attributes, all), "posix_spawnattr_setsigdefault");
                check(libc.posix_spawnattr_setflags(attributes, (short) (SETSID | SETSIGMASK | SETSIGDEF)),
                        "posix_spawnattr_setflags");
                return spawnPinned(argv, envp, cpu, actions, attributes);
            } finally {
                libc.posix_spawnattr_destroy(attributes);
            }
        } finally {
            libc.posix_spawn_file_actions_destroy(actions);
        }
    }

    private int spawnPinned(List<String> argv, List<String> envp, int cpu, Pointer actions, Pointer attributes)
            throws IOException {
        Memory saved = null;
        if (cpu >= 0) {
            if (cpu >= SET_BYTES * 8) {
                throw new IOException("CPU " + cpu + " is beyond the " + SET_BYTES * 8 + " a CPU mask holds");
            }
            saved = new Memory(SET_BYTES);
            if (libc.sched_getaffinity(0, SET_BYTES, saved) != 0) {
                throw new IOException("sched_getaffinity: " + libc.strerror(Native.getLastError()));
            }
            Memory one = new Memory(SET_BYTES);
            one.clear();
            one.setByte(cpu / 8, (byte) (1 << (cpu % 8)));
            if (libc.sched_setaffinity(0, SET_BYTES, one) != 0) {
                throw new IOException("cannot run on CPU " + cpu + ": " + libc.strerror(Native.getLastError()));
            }
        }
        try {
            IntByReference pid = new IntByReference();
            int result = libc.posix_spawnp(pid, argv.get(0), actions, attributes,
                    new StringArray(argv.toArray(new String[0])), new StringArray(envp.toArray(new String[0])));
            if (result != 0) {
                throw new IOException(argv.get(0) + ": " + libc.strerror(result));
            }
            return pid.getValue();
        } finally {
            if (saved != null) {
                // the launch thread goes back to running anywhere the proxy may
                libc.sched_setaffinity(0, SET_BYTES, saved);
            }
        }
    }

    /**
     * Sends a signal with {@code kill(2)}; a negative pid names a process group.
     *
     * @return whether it was delivered to at least one process
     */
    boolean signal(long pid, int signal) {
        return libc.kill((int) pid, signal) == 0;
    }

    /**
     * @param pgid a process group id
     * @return {@code true} when no process at all (not even a zombie) is in the group:
     *         {@code kill(-pgid, 0)} failed with ESRCH
     */
    boolean groupEmpty(long pgid) {
        return libc.kill((int) -pgid, 0) != 0 && Native.getLastError() == ESRCH;
    }

    private int[] pipe() throws IOException {
        int[] fds = new int[2];
        if (libc.pipe2(fds, O_CLOEXEC) != 0) {
            throw new IOException("pipe2: " + libc.strerror(Native.getLastError()));
        }
        return fds;
    }

    private void closeAll(int[] fds) {
        for (int fd : fds) {
            libc.close(fd);
        }
    }

    private void check(int result, String what) throws IOException {
        if (result != 0) {
            throw new IOException(what + ": " + libc.strerror(result));
        }
    }

    /**
     * @param status a {@code waitpid} status
     * @return the exit code, or 128 + the signal that ended the process (as {@link Process#exitValue()})
     */
    static int exitValue(int status) {
        int signal = status & 0x7f;
        return signal == 0 ? (status >> 8) & 0xff : 0x80 + signal;
    }
}
