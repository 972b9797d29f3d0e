package org.mpiproxy.mpi.internal;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.protocol.MpiErrors;

/**
 * A program's command line split into the library's part and the program's own arguments.
 * Rank form: {@code --slave <channel-file> <rankId> <worldSize> ARGS...}; host form:
 * {@code HOSTFILE ARGS...}.
 *
 * @param channelFile  the rank's channel file, {@code null} on the host
 * @param hostfile     the hostfile, {@code null} on a rank
 * @param rank         the rank id
 * @param worldSize    the world size; on the host 0 until the hostfile is read
 * @param programArgs  the program's own arguments
 */
public record LaunchArguments(Path channelFile, Path hostfile, int rank, int worldSize, List<String> programArgs) {

    /** First argument of a rank's command line. */
    public static final String SLAVE_FLAG = "--slave";

    public LaunchArguments {
        programArgs = List.copyOf(programArgs);
    }

    /** @return {@code true} when this process is a rank started by a proxy */
    public boolean isRank() {
        return channelFile != null;
    }

    /**
     * @param args the command line
     * @return {@code true} when it is a rank's command line ({@code --slave ...})
     */
    public static boolean isRankForm(String[] args) {
        return args.length > 0 && SLAVE_FLAG.equals(args[0]);
    }

    /**
     * @param args the command line
     * @return the program's own arguments, without parsing the library's part strictly
     */
    public static List<String> programArguments(String[] args) {
        if (args.length >= 4 && SLAVE_FLAG.equals(args[0])) {
            return List.of(Arrays.copyOfRange(args, 4, args.length));
        }
        return args.length == 0 ? List.of() : List.of(Arrays.copyOfRange(args, 1, args.length));
    }

    /**
     * @param args the command line
     * @return the parsed arguments
     * @throws MpiException {@code MPI_ERR_ARG} when the command line is malformed
     */
    public static LaunchArguments parse(String[] args) {
        if (args.length > 0 && SLAVE_FLAG.equals(args[0])) {
            if (args.length < 4) {
                throw new MpiException(MpiErrors.ERR_ARG,
                        "rank command line is " + SLAVE_FLAG + " <channel-file> <rankId> <worldSize> ARGS...");
            }
            int rank = integer(args[2], "rankId");
            int size = integer(args[3], "worldSize");
            if (size < 2 || size > 0xffff || rank < 1 || rank >= size) {
                throw new MpiException(MpiErrors.ERR_RANK, "rankId=" + rank + " worldSize=" + size
                        + ": a rank needs 1 <= rankId < worldSize <= 65535");
            }
            return new LaunchArguments(Path.of(args[1]), null, rank, size, programArguments(args));
        }
        if (args.length == 0 || args[0].isEmpty()) {
            throw new MpiException(MpiErrors.ERR_ARG, "no hostfile: run PROGRAM HOSTFILE ARGS...");
        }
        return new LaunchArguments(null, Path.of(args[0]), 0, 0, programArguments(args));
    }

    private static int integer(String text, String name) {
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            throw new MpiException(MpiErrors.ERR_ARG, name + " '" + text + "' is not a number");
        }
    }
}
