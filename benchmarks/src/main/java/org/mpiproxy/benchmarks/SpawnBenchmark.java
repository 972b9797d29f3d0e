package org.mpiproxy.benchmarks;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.StringArray;
import com.sun.jna.ptr.IntByReference;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What starting one process and waiting for its end costs from a JVM: Java's
 * {@code ProcessBuilder} (its default launch mechanism, posix_spawn of {@code jspawnhelper},
 * which then execs the program: two execs), and glibc's {@code posix_spawn} called directly
 * through JNA (one exec), without and with {@code POSIX_SPAWN_SETSID} (the session a rank gets
 * today from an extra {@code setsid} exec). The program is {@code /bin/true}; every call waits
 * for its exit ({@code waitpid}), so nothing accumulates.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class SpawnBenchmark {

    /** glibc's {@code POSIX_SPAWN_SETSID} (2.26 and later). */
    static final short POSIX_SPAWN_SETSID = 0x80;
    /** Room for glibc's {@code posix_spawnattr_t} (336 bytes on x86_64). */
    static final int ATTR_BYTES = 1024;

    /** The C library's spawn and wait. */
    public interface LibC extends Library {
        LibC INSTANCE = Native.load("c", LibC.class);

        int posix_spawn(IntByReference pid, String path, Pointer fileActions, Pointer attributes, StringArray argv,
                        StringArray envp);

        int posix_spawnattr_init(Pointer attributes);

        int posix_spawnattr_setflags(Pointer attributes, short flags);

        int posix_spawnattr_destroy(Pointer attributes);

        int waitpid(int pid, IntByReference status, int options);
    }

    private final ProcessBuilder builder = new ProcessBuilder("/bin/true");
    private final StringArray argv = new StringArray(new String[] {"/bin/true"});
    private final StringArray envp = new StringArray(new String[] {"PATH=/usr/bin:/bin"});
    private final IntByReference pid = new IntByReference();
    private final IntByReference status = new IntByReference();
    private Memory setsid;

    @Setup
    public void setUp() {
        setsid = new Memory(ATTR_BYTES);
        setsid.clear();
        check(LibC.INSTANCE.posix_spawnattr_init(setsid), "posix_spawnattr_init");
        check(LibC.INSTANCE.posix_spawnattr_setflags(setsid, POSIX_SPAWN_SETSID), "posix_spawnattr_setflags");
    }

    @TearDown
    public void tearDown() {
        LibC.INSTANCE.posix_spawnattr_destroy(setsid);
    }

    private static void check(int result, String call) {
        if (result != 0) {
            throw new IllegalStateException(call + " failed: " + result);
        }
    }

    private int spawnAndWait(Pointer attributes) {
        check(LibC.INSTANCE.posix_spawn(pid, "/bin/true", null, attributes, argv, envp), "posix_spawn");
        if (LibC.INSTANCE.waitpid(pid.getValue(), status, 0) != pid.getValue()) {
            throw new IllegalStateException("waitpid failed for " + pid.getValue());
        }
        return status.getValue();
    }

    @Benchmark
    public int processBuilder() throws IOException, InterruptedException {
        return builder.start().waitFor();
    }

    @Benchmark
    public int posixSpawn() {
        return spawnAndWait(null);
    }

    @Benchmark
    public int posixSpawnSetsid() {
        return spawnAndWait(setsid);
    }
}
