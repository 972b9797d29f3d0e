package org.mpiproxy.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;

import org.mpiproxy.api.LaunchException;
import org.mpiproxy.api.ProgramNames;

/**
 * Looks up program files by name inside a program directory, with the rules of
 * {@link ProgramNames}. Failures are {@link LaunchException}s with MPI_ERR_IO whose message
 * names the program. Stateless and thread-safe.
 */
public final class ProgramFiles {

    private ProgramFiles() {
    }

    /**
     * Resolves a program's executable file.
     *
     * @param directory the program directory
     * @param program   the requested program name
     * @return the real path of an executable regular file inside {@code directory}
     * @throws LaunchException when the name is invalid, the file is missing, escapes the
     *                         directory, is not a regular file or is not executable
     */
    public static Path executable(Path directory, String program) throws LaunchException {
        Path file = contained(directory, program, program);
        if (!Files.isExecutable(file)) {
            throw new LaunchException("program '" + program + "' is not executable");
        }
        return file;
    }

    /**
     * Resolves a program's executable file in the first directory that has it.
     *
     * @param directory the program directory, searched first
     * @param path      further directories, searched in order
     * @param program   the requested program name
     * @return the real path of an executable regular file inside one of the directories
     * @throws LaunchException when the name is invalid, no directory has the file, or the first
     *                         file found escapes its directory, is not a regular file or is not
     *                         executable
     */
    public static Path executable(Path directory, List<Path> path, String program) throws LaunchException {
        String problem = ProgramNames.problem(program);
        if (problem != null) {
            throw new LaunchException(problem);
        }
        List<Path> all = new ArrayList<>(1 + path.size());
        all.add(directory);
        all.addAll(path);
        for (int i = 0; i < all.size(); i++) {
            Path d = all.get(i);
            if (Files.exists(d.resolve(program), java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                return i == 0 ? executable(d, program) : onPath(d, program);
            }
        }
        StringJoiner names = new StringJoiner(", ");
        all.forEach(d -> names.add(d.toString()));
        throw new LaunchException("no program '" + program + "' in " + names);
    }

    /**
     * A program of a system directory of the path ({@code /usr/bin}): its links are followed
     * wherever they lead (Debian's alternatives: {@code /usr/bin/java} to {@code /etc/alternatives}
     * to the JDK), because only the directory's owner could have made them: the directory must be
     * root's or the proxy's user's and writable by its owner only, else the program is refused as
     * in the program directory.
     */
    private static Path onPath(Path directory, String program) throws LaunchException {
        try {
            java.nio.file.attribute.PosixFileAttributes a = Files.readAttributes(directory,
                    java.nio.file.attribute.PosixFileAttributes.class);
            Object uid = Files.getAttribute(directory, "unix:uid");
            long owner = uid instanceof Number n ? n.longValue() : -1;
            long self = ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).longValue();
            boolean ownerOnly = !a.permissions().contains(java.nio.file.attribute.PosixFilePermission.GROUP_WRITE)
                    && !a.permissions().contains(java.nio.file.attribute.PosixFilePermission.OTHERS_WRITE);
            if (!ownerOnly || (owner != 0 && owner != self)) {
                return executable(directory, program);
            }
            Path real = directory.resolve(program).toRealPath();
            if (!Files.isRegularFile(real)) {
                throw new LaunchException("program '" + program + "' is not a regular file");
            }
            if (!Files.isExecutable(real)) {
                throw new LaunchException("program '" + program + "' is not executable");
            }
            return real;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            throw new LaunchException("cannot resolve program '" + program + "' in " + directory + ": "
                    + e.getMessage(), e);
        }
    }

    /**
     * Resolves a file that belongs to a program, such as its image {@code <program>.lz4}.
     *
     * @param directory the program directory
     * @param program   the requested program name, validated with {@link ProgramNames#problem}
     * @param fileName  the file to look up, derived from {@code program}; validated as a file name
     * @return the real path of a regular file inside {@code directory}
     * @throws LaunchException when a name is invalid, the file is missing, escapes the
     *                         directory or is not a regular file
     */
    public static Path contained(Path directory, String program, String fileName) throws LaunchException {
        String problem = ProgramNames.problem(program);
        if (problem == null) {
            problem = ProgramNames.fileNameProblem(fileName);
        }
        if (problem != null) {
            throw new LaunchException(problem);
        }
        try {
            return ProgramNames.resolveContained(directory, fileName);
        } catch (IOException e) {
            throw new LaunchException(e.getMessage(), e);
        }
    }
}
