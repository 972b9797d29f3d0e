package mpi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A program written against Open MPI's Java bindings only (error handlers, groups, info objects,
 * the null objects) compiles against this library's classes, as against {@code mpi.jar}.
 */
class OpenMpiProgramCompileTest {

    private static final String PROGRAM = """
            import mpi.*;

            public class GroupsAndErrors {
                public static void main(String[] args) throws MPIException {
                    MPI.Init(args);
                    Intracomm world = MPI.COMM_WORLD;
                    world.setErrhandler(MPI.ERRORS_RETURN);
                    Errhandler handler = world.getErrhandler();
                    if (handler == MPI.ERRORS_ARE_FATAL) {
                        world.setErrhandler(MPI.ERRORS_ARE_FATAL);
                    }
                    Group all = world.getGroup();
                    Group first = all.incl(new int[] {0});
                    Group rest = all.excl(new int[] {0});
                    Group evens = all.rangeIncl(new int[][] {{0, all.getSize() - 1, 2}});
                    Group odds = all.rangeExcl(new int[][] {{0, all.getSize() - 1, 2}});
                    Group union = Group.union(first, rest);
                    Group both = Group.intersection(union, evens);
                    Group other = Group.difference(union, odds);
                    int[] ranks = Group.translateRanks(all, new int[] {0}, union);
                    int same = Group.compare(all, union);
                    boolean known = same == MPI.IDENT || same == MPI.CONGRUENT || same == MPI.SIMILAR
                            || same == MPI.UNEQUAL;
                    Intracomm part = world.create(first);
                    Intracomm copy = world.clone();
                    Comm base = copy;
                    Comm baseCopy = base.clone();
                    int cmp = Comm.compare(world, copy);
                    Intracomm none = world.split(MPI.UNDEFINED, 0);
                    if (!none.isNull() || part == MPI.COMM_NULL || all.getRank() == MPI.UNDEFINED) {
                        System.out.println("not in every part");
                    }
                    Info info = new Info();
                    info.set("key", "value");
                    String value = info.get("key");
                    if (info.size() > 0) {
                        value = info.getKey(0);
                    }
                    info.delete("key");
                    Info copyOfInfo = info.clone();
                    copyOfInfo.free();
                    boolean nullInfo = MPI.INFO_NULL.isNull() && copyOfInfo.isNull();
                    Request done = MPI.REQUEST_NULL;
                    done.waitFor();
                    try {
                        world.send(null, 0, MPI.INT, MPI.PROC_NULL, 0);
                        world.send(new int[1], 1, MPI.INT, world.getSize(), 0);
                    } catch (MPIException e) {
                        int errorClass = e.getErrorClass();
                        int code = e.getErrorCode();
                        System.out.println(MPI.getErrorString(errorClass) + " " + code);
                    }
                    world.callErrhandler(MPI.ERR_OTHER);
                    int[] classes = {MPI.SUCCESS, MPI.ERR_COMM, MPI.ERR_RANK, MPI.ERR_ARG, MPI.ERR_TYPE,
                        MPI.ERR_COUNT, MPI.ERR_TAG, MPI.ERR_ROOT, MPI.ERR_GROUP, MPI.ERR_OP, MPI.ERR_BUFFER,
                        MPI.ERR_REQUEST, MPI.ERR_TRUNCATE, MPI.ERR_OTHER, MPI.ERR_INTERN, MPI.ERR_UNKNOWN,
                        MPI.ERR_IN_STATUS, MPI.ERR_PENDING, MPI.ERR_INFO, MPI.ERR_INFO_KEY, MPI.ERR_INFO_NOKEY,
                        MPI.ERR_INFO_VALUE, MPI.ERR_TOPOLOGY, MPI.ERR_DIMS, MPI.ERR_LASTCODE};
                    Group empty = MPI.GROUP_EMPTY;
                    empty.free();
                    other.free();
                    both.free();
                    baseCopy.free();
                    copy.free();
                    if (!part.isNull()) {
                        part.free();
                    }
                    MPI.Finalize();
                }
            }
            """;

    @TempDir
    Path dir;

    @Test
    void shouldCompileAProgramWrittenForOpenMpisBindings() throws Exception {
        Path source = dir.resolve("GroupsAndErrors.java");
        Files.writeString(source, PROGRAM);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "a JDK's compiler");
        String classes = new File(MPI.class.getProtectionDomain().getCodeSource().getLocation().toURI()).getPath();
        StringWriter out = new StringWriter();

        Boolean ok = javac.getTask(out, null, null, List.of("-cp", classes, "-d", dir.toString(), "-proc:none"), null,
                javac.getStandardFileManager(null, null, null).getJavaFileObjects(source.toFile())).call();

        assertEquals(true, ok, out.toString());
        assertTrue(Files.exists(dir.resolve("GroupsAndErrors.class")));
    }
}
