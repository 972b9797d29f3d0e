package org.mpiproxy.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The benchmarks' Java programs of the {@code mpi} package ({@code org.mpiproxy.benchmarks.mpi},
 * importing nothing of the project), run as a user runs them: the distribution's {@code mpijava}
 * and {@code mpi.jar} in the node's programs directory, {@code bin/mpiproxy run ... mpijava -cp
 * CLASSES MAIN}.
 */
final class JavaMpiPrograms {

    /** Debian's MPICH (ch4:ucx) over TCP on loopback instead of shared memory (anchors.md). */
    static final Map<String, String> MPICH_TCP = Map.of("MPIR_CVAR_NOLOCAL", "1", "UCX_TLS", "tcp",
            "UCX_NET_DEVICES", "lo");

    private static final Path MPIJAVA = Path.of("examples/src/main/programs/mpijava");
    private static final Path MPI_JAR = Path.of("examples/target/mpi.jar");
    private static final Path CLASSES = Path.of("benchmarks/target/classes");

    private final Path programs;
    private final Path keyFile;
    private final Path nodeMap;

    JavaMpiPrograms(Path programs, Path keyFile, Path nodeMap) {
        this.programs = programs;
        this.keyFile = keyFile;
        this.nodeMap = nodeMap;
    }

    /** @return why the programs cannot run here, or {@code null} */
    static String unavailable() {
        if (!Files.isRegularFile(MPI_JAR)) {
            return MPI_JAR + " is missing (run.sh builds it with the examples module)";
        }
        if (!Files.isRegularFile(MPIJAVA)) {
            return MPIJAVA + " is missing: run the harness from a clone";
        }
        return null;
    }

    /** Copies {@code mpijava} and {@code mpi.jar} into the node's programs directory. */
    static void install(Path programs) throws IOException {
        Path script = programs.resolve("mpijava");
        Files.copy(MPIJAVA, script, StandardCopyOption.REPLACE_EXISTING);
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.copy(MPI_JAR, programs.resolve("mpi.jar"), StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * Runs {@code org.mpiproxy.benchmarks.mpi.MAIN ARGS...} on {@code n} ranks placed by {@code hosts}
     * (names of the node map) and waits for it.
     */
    MpichPrograms.Run run(String hosts, int n, String main, Map<String, String> environment, Path work,
                          String... args) throws IOException, InterruptedException {
        List<String> c = new ArrayList<>(List.of("sh", MpichPrograms.SCRIPT.toString(), "run", "--key-file",
                keyFile.toString(), "--node-map", nodeMap.toString(), "--hosts", hosts, "-n", Integer.toString(n),
                programs.resolve("mpijava").toString(), "-cp", CLASSES.toAbsolutePath().toString(),
                "org.mpiproxy.benchmarks.mpi." + main));
        c.addAll(List.of(args));
        return MpichPrograms.run(c, environment, work);
    }
}
