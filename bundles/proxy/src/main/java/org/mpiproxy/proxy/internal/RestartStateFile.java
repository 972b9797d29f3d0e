package org.mpiproxy.proxy.internal;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Map;

import org.mpiproxy.api.PrivateDirectories;

/**
 * The file {@link NodeRestart} keeps the jobs in across a restart of the node: a header
 * ({@code MPRS} magic, format version) and one {@link StateCodec} value. Written atomically (a
 * temporary file renamed); read only when its size is within what the heap can take, and never
 * trusting a length in it beyond the bytes it holds; a file that cannot be read is set aside
 * under a suffix ({@value #DAMAGED}{@code <UTC time>}) for whoever wants to look at it. Any thread.
 */
final class RestartStateFile {

    /** What a file set aside gets after its name, followed by the time. */
    static final String DAMAGED = ".damaged-";
    private static final int MAGIC = 0x4d505253;
    private static final int VERSION = 1;
    private static final int HEADER_LENGTH = 8;
    /**
     * The heap a state file may take, as a divisor of the largest heap: decoded, a value takes a
     * few times its bytes (maps of short strings about ten), so a file of a sixteenth of the heap
     * still leaves room for the node.
     */
    private static final long HEAP_DIVISOR = 16;
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("uuuuMMdd'T'HHmmss.SSS'Z'")
            .withZone(ZoneOffset.UTC);

    private RestartStateFile() {
    }

    /** @return the largest state file a start reads with this JVM's heap */
    static long maxBytes() {
        return Runtime.getRuntime().maxMemory() / HEAP_DIVISOR;
    }

    /**
     * Writes a state to {@code name} in the state directory, atomically: a failure (a full file
     * system) leaves no file of that name and removes the temporary one.
     *
     * @return the codec, which names what it left out
     * @throws IOException when the directory cannot be used or the file cannot be written
     */
    static StateCodec write(Map<String, Object> state, Path stateDir, String name) throws IOException {
        StateCodec codec = new StateCodec();
        PrivateDirectories.restrict(stateDir, PrivateDirectories.OWNER_ONLY, "state.directory=" + stateDir);
        Path tmp = stateDir.resolve(name + ".tmp");
        Files.deleteIfExists(tmp);
        try {
            try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(tmp,
                    StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)))) {
                out.writeInt(MAGIC);
                out.writeInt(VERSION);
                codec.write(out, state, "state");
            }
            Files.move(tmp, stateDir.resolve(name), StandardCopyOption.REPLACE_EXISTING,
                    StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException | RuntimeException e) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException again) {
                e.addSuppressed(again);
            }
            throw e;
        }
        return codec;
    }

    /**
     * Reads a state file.
     *
     * @param file     the file
     * @param maxBytes the largest file read (see {@link #maxBytes()})
     * @return the state
     * @throws IOException when the file is too large, of another format or version, ends early,
     *                     holds a length beyond its own size or bytes after its value, naming which
     */
    static Map<String, Object> read(Path file, long maxBytes) throws IOException {
        long size = Files.size(file);
        if (size > maxBytes) {
            throw new IOException("it is " + size + " bytes, more than the " + maxBytes + " a start reads");
        }
        if (size < HEADER_LENGTH) {
            throw new IOException("it is " + size + " bytes, shorter than its header");
        }
        try (InputStream in = new BufferedInputStream(Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS))) {
            DataInputStream header = new DataInputStream(in);
            int magic = header.readInt();
            int version = header.readInt();
            if (magic != MAGIC) {
                throw new IOException("not a state file (magic " + Integer.toHexString(magic) + ")");
            }
            if (version != VERSION) {
                throw new IOException("state file version " + version + ", this proxy reads " + VERSION);
            }
            Object state = new StateCodec().read(in, size - HEADER_LENGTH);
            if (in.read() >= 0) {
                throw new IOException("bytes after the end of the state");
            }
            if (!(state instanceof Map)) {
                throw new IOException("the state is not a map");
            }
            return RankHandOver.asMap(state);
        } catch (EOFException e) {
            throw new IOException("it ends before its state does: " + size + " bytes", e);
        }
    }

    /**
     * Renames a file that cannot be read to its name, {@value #DAMAGED} and the time, so that the
     * next start does not meet it again and nothing in it is lost.
     *
     * @return the new path
     * @throws IOException when it cannot be renamed
     */
    static Path setAside(Path file, Instant now) throws IOException {
        String base = file.getFileName() + DAMAGED + STAMP.format(now);
        Path target = file.resolveSibling(base);
        for (int i = 1; ; i++) {
            try {
                // a link never replaces a file of that name (a rename would, silently): then the old name goes
                Files.createLink(target, file);
                Files.delete(file);
                return target;
            } catch (UnsupportedOperationException e) {
                // a file system without links: look first, then rename
                if (!Files.exists(target, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                    return Files.move(file, target, StandardCopyOption.ATOMIC_MOVE);
                }
                target = file.resolveSibling(base + "-" + i);
            } catch (FileAlreadyExistsException e) {
                if (i >= 100) {
                    throw e;
                }
                target = file.resolveSibling(base + "-" + i);
            }
        }
    }

    /** @return what went wrong, in words: {@code No space left on device}, with the file where known */
    static String cause(Throwable e) {
        if (e instanceof FileSystemException f) {
            String what = f.getReason() != null ? f.getReason() : e.getClass().getSimpleName();
            return f.getFile() != null ? f.getFile() + ": " + what : what;
        }
        return e.getMessage() != null ? e.getMessage() : e.toString();
    }
}
