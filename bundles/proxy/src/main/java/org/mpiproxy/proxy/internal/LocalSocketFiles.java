package org.mpiproxy.proxy.internal;

import java.io.IOException;
import java.net.ConnectException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

import org.mpiproxy.api.PrivateDirectories;
import org.slf4j.LoggerFactory;

/** The checks of the local socket's directory and of a socket left at its path ({@link LocalSocketServer}). */
final class LocalSocketFiles {

    private static final int S_IFMT = 0170000;
    private static final int S_IFSOCK = 0140000;

    private LocalSocketFiles() {
    }

    /**
     * @param directory the socket's directory
     * @return {@code null} when it is missing or may be used, else why not, to follow its name
     */
    static String directoryProblem(Path directory) {
        PosixFileAttributes attributes;
        long owner;
        try {
            attributes = Files.readAttributes(directory, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            owner = ((Number) Files.getAttribute(directory, "unix:uid", LinkOption.NOFOLLOW_LINKS)).longValue();
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException | RuntimeException e) {
            return "cannot be inspected: " + e;
        }
        if (attributes.isSymbolicLink()) {
            return "is a symbolic link; name the directory itself";
        }
        if (!attributes.isDirectory()) {
            return "is not a directory";
        }
        long self = PrivateDirectories.currentUid();
        if (owner != self) {
            return "is owned by uid " + owner + ", not by uid " + self + " that runs the proxy; remove it, or give it"
                    + " to uid " + self + " with mode 755";
        }
        Set<PosixFilePermission> mode = attributes.permissions();
        if (mode.contains(PosixFilePermission.GROUP_WRITE) || mode.contains(PosixFilePermission.OTHERS_WRITE)) {
            return "can be written by its group or others (" + PosixFilePermissions.toString(mode) + "); make it 755";
        }
        return null;
    }

    /** Removes a socket nobody listens on; refuses anything else at the path. */
    static void removeStale(Path socket) throws IOException {
        int mode;
        try {
            mode = (Integer) Files.getAttribute(socket, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return;
        }
        if ((mode & S_IFMT) != S_IFSOCK) {
            throw new IOException("the local socket " + socket + " exists and is not a socket; not removing it");
        }
        try (SocketChannel probe = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            probe.configureBlocking(false);
            probe.connect(UnixDomainSocketAddress.of(socket));
            throw new IOException("another process listens on the local socket " + socket);
        } catch (ConnectException e) {
            // nobody listens: left by a proxy that ended
        }
        Files.deleteIfExists(socket);
        LoggerFactory.getLogger(LocalSocketServer.class).info("removed the stale local socket {}", socket);
    }
}
