package org.mpiproxy.mpi.internal;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.protocol.MpiErrors;

/**
 * A program's command line split into the library's part and the program's own arguments.
 * Rank form: {@code --slave <channel-file> <rankId> <worldSize> ARGS...}; host form:
 * {@code HOSTFILE ARGS...}. A rank a proxy started as given (a plain EXEC, docs/protocol-v2.md 5.1)
 * has no library arguments: its channel, rank and size are in the environment
 * ({@link #fromEnvironment}).
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
    /** Environment variable a proxy sets for every rank: its channel file. */
    public static final String CHANNEL_ENV = "MPIPROXY_CHANNEL";
    /** Environment variable a proxy sets for every rank: its rank id. */
    public static final String RANK_ENV = "MPIPROXY_RANK";
    /** Environment variable a proxy sets for every rank: the world size. */
    public static final String SIZE_ENV = "MPIPROXY_WORLD_SIZE";

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

    /**
     * @param env  the environment
     * @param args the command line, all of it the program's own
     * @return the rank a proxy started as given, or {@code null} when {@value #CHANNEL_ENV} is not set
     * @throws MpiException {@code MPI_ERR_ARG} or {@code MPI_ERR_RANK} when the rank or size is missing or bad
     */
    public static LaunchArguments fromEnvironment(java.util.function.Function<String, String> env, String[] args) {
        String channel = env.apply(CHANNEL_ENV);
        if (channel == null || channel.isBlank()) {
            return null;
        }
        String rankText = env.apply(RANK_ENV);
        String sizeText = env.apply(SIZE_ENV);
        if (rankText == null || sizeText == null) {
            throw new MpiException(MpiErrors.ERR_ARG, CHANNEL_ENV + " is set but " + (rankText == null ? RANK_ENV
                    : SIZE_ENV) + " is not: a rank started by a proxy has all three");
        }
        int rank = integer(rankText.strip(), RANK_ENV);
        int size = integer(sizeText.strip(), SIZE_ENV);
        if (size < 2 || size > 0xffff || rank < 1 || rank >= size) {
            throw new MpiException(MpiErrors.ERR_RANK, RANK_ENV + "=" + rank + " " + SIZE_ENV + "=" + size
                    + ": a rank needs 1 <= rank < size <= 65535");
        }
        return new LaunchArguments(Path.of(channel), null, rank, size, List.of(args));
    }

    private static int integer(String text, String name) {
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            throw new MpiException(MpiErrors.ERR_ARG, name + " '" + text + "' is not a number");
        }
    }
}
