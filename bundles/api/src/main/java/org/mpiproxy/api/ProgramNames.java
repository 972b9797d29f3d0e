package org.mpiproxy.api;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * Rules for program names: a program is named, never addressed by path, and
 * {@code <name>.lz4} is the image of program {@code <name>} for remote cores, never a program.
 */
public final class ProgramNames {

    /** Longest accepted program name in characters. */
    public static final int MAX_LENGTH = 255;

    /** Suffix of a program's LZ4 image, the file the launcher of remote cores starts it from. */
    public static final String IMAGE_SUFFIX = ".lz4";

    private ProgramNames() {
    }

    /**
     * Checks that {@code name} can name a program: a plain file name that is not an image.
     *
     * @param name the requested program name
     * @return {@code null} when acceptable, else a message saying why not
     */
    public static String problem(String name) {
        String problem = fileNameProblem(name);
        if (problem == null && isImage(name)) {
            String program = name.substring(0, name.length() - IMAGE_SUFFIX.length());
            return "'" + printable(name) + "' is the LZ4 image of program '" + printable(program)
                    + "' for remote cores, not a program: name '" + printable(program) + "'";
        }
        return problem;
    }

    /**
     * @param name a file name in a program directory
     * @return whether it names a program's image ({@code <program>.lz4})
     */
    public static boolean isImage(String name) {
        return name != null && name.endsWith(IMAGE_SUFFIX);
    }

    /**
     * Checks that {@code name} is a plain file name, such as a program's or its image's.
     *
     * @param name the file name
     * @return {@code null} when acceptable, else a message saying why not
     */
    public static String fileNameProblem(String name) {
        if (name == null || name.isEmpty()) {
            return "program name is empty";
        }
        if (name.length() > MAX_LENGTH) {
            return "program name is longer than " + MAX_LENGTH + " characters";
        }
        if (name.equals(".") || name.equals("..") || name.contains("..")) {
            return "program name '" + printable(name) + "' contains '..'";
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '/' || c == '\\') {
                return "program name '" + printable(name) + "' contains a path separator";
            }
            if (c < 0x20 || c == 0x7f || Character.isISOControl(c)) {
                return "program name contains control character 0x" + Integer.toHexString(c);
            }
        }
        return null;
    }

    /**
     * Resolves {@code fileName} inside {@code directory}, following links, and checks that the
     * result is a regular file that stays inside the directory.
     *
     * @param directory the program directory
     * @param fileName  an already validated name (see {@link #problem})
     * @return the real path of the file
     * @throws IOException with a readable message when the file is missing, escapes the
     *                     directory or is not a regular file
     */
    public static Path resolveContained(Path directory, String fileName) throws IOException {
        Path realDir;
        try {
            realDir = directory.toRealPath();
        } catch (IOException e) {
            throw new IOException("program directory " + directory + " does not exist", e);
        }
        Path candidate = realDir.resolve(fileName);
        if (!Files.exists(candidate, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException("no program '" + fileName + "' in " + realDir);
        }
        Path real = candidate.toRealPath();
        if (!real.startsWith(realDir) || real.equals(realDir)) {
            throw new IOException("program '" + fileName + "' resolves outside " + realDir);
        }
        if (!Files.isRegularFile(real)) {
            throw new IOException("program '" + fileName + "' is not a regular file");
        }
        return real;
    }

    private static String printable(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            b.append(c < 0x20 || c == 0x7f ? '?' : c);
        }
        return b.toString();
    }
}
