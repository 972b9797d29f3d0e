package org.mpiproxy.protocol;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The cluster keys of v2, by key id (1..255; 0 is a job's key, {@link #ofJobKey}), read from key files. A key file holds the key as
 * hexadecimal digits (at least 64, i.e. 256 bits; surrounding white space is ignored), is a
 * regular file (not a symbolic link), is owned by the user reading it and is readable by that
 * user only (mode 0600 or 0400). Immutable and thread-safe.
 */
public final class ClusterKeys {

    /** Shortest key in bytes (256 bits). */
    public static final int MIN_KEY_BYTES = 32;
    /** Longest key file accepted, in bytes. */
    public static final int MAX_FILE_BYTES = 4096;
    /**
     * Fewest different byte values a key a node serves with must hold ({@link #weakness}): a random
     * 256-bit key holds about 30, and fewer than 16 with a chance of 3e-17.
     */
    public static final int MIN_DISTINCT_BYTES = 16;

    private static final Set<PosixFilePermission> ALLOWED = Set.of(PosixFilePermission.OWNER_READ,
            PosixFilePermission.OWNER_WRITE);

    private final byte[][] keys = new byte[256][];
    private final int sendKeyId;

    private ClusterKeys(Map<Integer, byte[]> byId, int sendKeyId) {
        byId.forEach((id, key) -> keys[id] = key.clone());
        this.sendKeyId = sendKeyId;
    }

    /**
     * @param byId      keys by id; at least one
     * @param sendKeyId the id of the key that signs what this side sends
     * @return the keys
     * @throws IllegalArgumentException when an id is out of 0..255, a key is shorter than
     *                                  {@link #MIN_KEY_BYTES} or {@code sendKeyId} is not among them
     */
    public static ClusterKeys of(Map<Integer, byte[]> byId, int sendKeyId) {
        for (Map.Entry<Integer, byte[]> e : byId.entrySet()) {
            checkId(e.getKey());
            if (e.getValue().length < MIN_KEY_BYTES) {
                throw new IllegalArgumentException("key " + e.getKey() + " has " + e.getValue().length
                        + " bytes; at least " + MIN_KEY_BYTES + " are needed");
            }
        }
        if (!byId.containsKey(sendKeyId)) {
            throw new IllegalArgumentException("key id " + sendKeyId + " is not configured");
        }
        return new ClusterKeys(byId, sendKeyId);
    }

    /**
     * Reads key files. The first entry's key signs what this side sends (the newest key during
     * a rotation); every listed key is accepted.
     *
     * @param files key files by id, in order
     * @return the keys
     * @throws IllegalArgumentException with a message that names the file and what is wrong with it
     */
    public static ClusterKeys load(Map<Integer, Path> files) {
        if (files.isEmpty()) {
            throw new IllegalArgumentException("no v2 key file is configured");
        }
        Map<Integer, byte[]> keys = new TreeMap<>();
        int first = -1;
        for (Map.Entry<Integer, Path> e : files.entrySet()) {
            checkId(e.getKey());
            keys.put(e.getKey(), readKeyFile(e.getValue()));
            if (first < 0) {
                first = e.getKey();
            }
        }
        return of(keys, first);
    }

    /**
     * As {@link #load}, refusing what a node must not serve with: a key file that is not the
     * owner's alone (see {@link #readKeyFile}) or a key that fails the entropy floor
     * ({@link #weakness}). Every key is checked before any is used: one bad file refuses them all.
     *
     * @param files key files by id, in order
     * @return the keys
     * @throws IllegalArgumentException with a message that names the file and what is wrong with it
     */
    public static ClusterKeys loadStrong(Map<Integer, Path> files) {
        for (Path file : files.values()) {
            String weak = weakness(readKeyFile(file));
            if (weak != null) {
                throw new IllegalArgumentException("key file " + file + " holds a weak key: it " + weak
                        + "; make a random one (32 bytes of /dev/urandom, in hexadecimal)");
            }
        }
        return load(files);
    }

    /**
     * The entropy floor of a key: refuses what is not random, as a key typed or made by mistake
     * (zeros, one byte repeated, a phrase repeated) is not. A random key of
     * {@link #MIN_KEY_BYTES} bytes passes but with a chance below 1e-16.
     *
     * @param key the key
     * @return {@code null} when the key passes, else why not, to follow "it": {@code is shorter than
     *         32 bytes}, {@code is all zero}, {@code repeats the <n>-byte pattern <hex>}, or {@code holds
     *         only <k> different byte values (a random key holds about 30; at least 16 are needed)}
     */
    public static String weakness(byte[] key) {
        if (key.length < MIN_KEY_BYTES) {
            return "is shorter than " + MIN_KEY_BYTES + " bytes (" + key.length + ")";
        }
        boolean zero = true;
        for (byte b : key) {
            zero &= b == 0;
        }
        if (zero) {
            return "is all zero";
        }
        for (int period = 1; period <= key.length / 2; period++) {
            boolean repeats = true;
            for (int i = period; i < key.length && repeats; i++) {
                repeats = key[i] == key[i - period];
            }
            if (repeats) {
                return "repeats the " + period + "-byte pattern "
                        + java.util.HexFormat.of().formatHex(key, 0, Math.min(period, 16)) + (period > 16 ? "..." : "");
            }
        }
        boolean[] seen = new boolean[256];
        int distinct = 0;
        for (byte b : key) {
            if (!seen[b & 0xff]) {
                seen[b & 0xff] = true;
                distinct++;
            }
        }
        if (distinct < MIN_DISTINCT_BYTES) {
            return "holds only " + distinct + " different byte values (a random key holds about 30; at least "
                    + MIN_DISTINCT_BYTES + " are needed)";
        }
        return null;
    }

    /**
     * Parses a key file list such as {@code "2:etc/new.key,1:etc/old.key"} or a single path
     * (key id 1). Relative paths are resolved against {@code base}.
     *
     * @param spec the list
     * @param base directory for relative paths
     * @return paths by key id, in the order given
     * @throws IllegalArgumentException when the list is malformed
     */
    public static Map<Integer, Path> parseFileList(String spec, Path base) {
        Map<Integer, Path> files = new java.util.LinkedHashMap<>();
        for (String item : spec.split(",")) {
            String s = item.trim();
            if (s.isEmpty()) {
                continue;
            }
            int colon = s.indexOf(':');
            int id = 1;
            String path = s;
            if (colon > 0 && s.substring(0, colon).chars().allMatch(Character::isDigit)) {
                id = Integer.parseInt(s.substring(0, colon));
                path = s.substring(colon + 1);
            }
            checkId(id);
            if (files.put(id, base.resolve(path)) != null) {
                throw new IllegalArgumentException("key id " + id + " is listed twice in \"" + spec + "\"");
            }
        }
        if (files.isEmpty()) {
            throw new IllegalArgumentException("no v2 key file is configured");
        }
        return files;
    }

    /**
     * Reads and checks one key file.
     *
     * @param file the file
     * @return the key bytes
     * @throws IllegalArgumentException saying exactly what is wrong
     */
    public static byte[] readKeyFile(Path file) {
        PosixFileAttributes attributes;
        try {
            attributes = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("key file " + file + " does not exist");
        } catch (IOException | UnsupportedOperationException e) {
            throw new IllegalArgumentException("key file " + file + " cannot be inspected: " + e);
        }
        if (attributes.isSymbolicLink()) {
            throw new IllegalArgumentException("key file " + file + " is a symbolic link; name the file itself");
        }
        if (!attributes.isRegularFile()) {
            throw new IllegalArgumentException("key file " + file + " is not a regular file");
        }
        Set<PosixFilePermission> permissions = attributes.permissions();
        if (!ALLOWED.containsAll(permissions) || !permissions.contains(PosixFilePermission.OWNER_READ)) {
            throw new IllegalArgumentException("key file " + file + " has mode " + PosixFilePermissions.toString(
                    permissions) + "; it must be rw------- (0600) or r-------- (0400)");
        }
        String user = System.getProperty("user.name");
        String owner = attributes.owner().getName();
        if (!owner.equals(user)) {
            throw new IllegalArgumentException("key file " + file + " is owned by " + owner + ", not by " + user
                    + ", the user running this program");
        }
        if (attributes.size() > MAX_FILE_BYTES) {
            throw new IllegalArgumentException("key file " + file + " has " + attributes.size()
                    + " bytes, more than " + MAX_FILE_BYTES);
        }
        String text;
        try {
            text = new String(Files.readAllBytes(file), StandardCharsets.US_ASCII).strip();
        } catch (IOException e) {
            throw new IllegalArgumentException("key file " + file + " cannot be read: " + e);
        }
        byte[] key = parseHex(text);
        if (key == null) {
            throw new IllegalArgumentException("key file " + file
                    + " must hold an even number of hexadecimal digits and nothing else");
        }
        if (key.length < MIN_KEY_BYTES) {
            throw new IllegalArgumentException("key file " + file + " holds a " + key.length * 8
                    + "-bit key; at least " + MIN_KEY_BYTES * 8 + " bits (" + MIN_KEY_BYTES * 2
                    + " hexadecimal digits) are needed");
        }
        return key;
    }

    /**
     * Creates a key file with a new random 256-bit key and mode 0600, unless the file exists.
     *
     * @param file the file
     * @return {@code true} when it was created
     * @throws IOException when it cannot be created
     */
    public static boolean generateIfMissing(Path file) throws IOException {
        if (Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        byte[] key = new byte[MIN_KEY_BYTES];
        new SecureRandom().nextBytes(key);
        StringBuilder hex = new StringBuilder();
        for (byte b : key) {
            hex.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
        }
        hex.append('\n');
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(ALLOWED));
        } catch (FileAlreadyExistsException e) {
            return false;
        }
        Files.writeString(file, hex, StandardCharsets.US_ASCII);
        return true;
    }

    private static byte[] parseHex(String text) {
        if (text.isEmpty() || text.length() % 2 != 0) {
            return null;
        }
        byte[] out = new byte[text.length() / 2];
        for (int i = 0; i < out.length; i++) {
            int hi = Character.digit(text.charAt(2 * i), 16);
            int lo = Character.digit(text.charAt(2 * i + 1), 16);
            if (hi < 0 || lo < 0) {
                return null;
            }
            out[i] = (byte) (hi << 4 | lo);
        }
        return out;
    }

    private static void checkId(int id) {
        if (id == JobCredential.JOB_KEY_ID) {
            throw new IllegalArgumentException("key id 0 is reserved for job keys (docs/protocol-v2.md 4.1); use 1..255");
        }
        if (id < 0 || id > 255) {
            throw new IllegalArgumentException("key id " + id + " is not in 1..255");
        }
    }

    /**
     * The keys of a host that holds no cluster key, only the key of its job (docs/protocol-v2.md
     * 4.1): key id {@link JobCredential#JOB_KEY_ID}, which also signs what it sends.
     *
     * @param jobKey the job key, {@link #MIN_KEY_BYTES} bytes at least
     * @return the keys
     * @throws IllegalArgumentException when the key is too short
     */
    public static ClusterKeys ofJobKey(byte[] jobKey) {
        if (jobKey.length < MIN_KEY_BYTES) {
            throw new IllegalArgumentException("a job key has " + jobKey.length + " bytes; at least " + MIN_KEY_BYTES
                    + " are needed");
        }
        return new ClusterKeys(Map.of(JobCredential.JOB_KEY_ID, jobKey), JobCredential.JOB_KEY_ID);
    }

    /** @return the id of the key that signs what this side sends */
    public int sendKeyId() {
        return sendKeyId;
    }

    /**
     * @param keyId a key id, any value
     * @return a copy of the key, or {@code null} when the id is not configured
     */
    public byte[] key(int keyId) {
        return keyId >= 0 && keyId < keys.length && keys[keyId] != null ? keys[keyId].clone() : null;
    }

    /** @return {@code true} when a key with this id is configured */
    public boolean has(int keyId) {
        return keyId >= 0 && keyId < keys.length && keys[keyId] != null;
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("ClusterKeys[ids=");
        for (int i = 0; i < keys.length; i++) {
            if (keys[i] != null) {
                b.append(i).append(i == sendKeyId ? "*" : "").append(' ');
            }
        }
        return b.append(']').toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ClusterKeys && ((ClusterKeys) o).sendKeyId == sendKeyId
                && Arrays.deepEquals(((ClusterKeys) o).keys, keys);
    }

    @Override
    public int hashCode() {
        return sendKeyId;
    }
}
