package org.mpiproxy.api;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * Rules for program names: a program is named, never addressed by path.
 */
public final class ProgramNames {

    /** Longest accepted program name in characters. */
    public static final int MAX_LENGTH = 255;

    private ProgramNames() {
    }

    /**
     * Checks that {@code name} is a plain file name.
     *
     * @param name the requested program name
     * @return {@code null} when acceptable, else a message saying why not
     */
    public static String problem(String name) {
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
