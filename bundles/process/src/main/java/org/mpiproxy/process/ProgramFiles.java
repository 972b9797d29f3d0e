package org.mpiproxy.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

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
