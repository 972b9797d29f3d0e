package org.mpiproxy.process;

import java.nio.file.Path;
import java.util.HexFormat;
import java.util.function.UnaryOperator;

/**
 * Where programs a host staged to a node live (docs/protocol-v2.md 5.8), and what they are
 * called there: {@code sha256-<64 hex digits>} of their content, in
 * {@code ${karaf.data}/mpiproxy/staged}. The proxy writes them; the local launcher runs them for
 * plain EXECs that name them. Stateless and thread-safe.
 */
public final class StagedFiles {

    /** The start of every staged program's name; the rest is its SHA-256 in hexadecimal. */
    public static final String PREFIX = "sha256-";

    private StagedFiles() {
    }

    /**
     * @param properties system property lookup, usually {@code System::getProperty}
     * @return the directory of staged programs
     */
    public static Path directory(UnaryOperator<String> properties) {
        return LauncherDirectories.dataDirectory("", properties, "mpiproxy/staged");
    }

    /**
     * @param sha256 a content's digest, 32 bytes
     * @return the name of a program with that content
     */
    public static String name(byte[] sha256) {
        return PREFIX + HexFormat.of().formatHex(sha256);
    }
}
