package org.mpiproxy.itests;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Predicate;
import java.util.zip.GZIPInputStream;

/**
 * Reads the entries of the distribution's {@code .tar.gz} (POSIX/ustar, with PAX or GNU long
 * names) with their file modes: Pax Exam unpacks the archive without them.
 */
final class DistributionArchive {

    private static final int BLOCK = 512;

    /**
     * One archive entry.
     *
     * @param name      path below the archive's top-level directory, without a trailing slash
     * @param mode      permission bits, e.g. {@code 0755}
     * @param directory whether the entry is a directory
     * @param content   the file's bytes when requested, else {@code null}
     */
    record Entry(String name, int mode, boolean directory, byte[] content) {

        boolean isExecutable() {
            return (mode & 0111) != 0;
        }

        String text() {
            return new String(content, StandardCharsets.UTF_8);
        }
    }

    private DistributionArchive() {
    }

    /**
     * @param archive     the {@code .tar.gz} file
     * @param withContent names whose content is kept
     * @return the entries by name, in archive order
     * @throws IOException when the file cannot be read or is not a tar archive
     */
    static Map<String, Entry> read(Path archive, Predicate<String> withContent) throws IOException {
        Map<String, Entry> entries = new LinkedHashMap<>();
        try (InputStream file = Files.newInputStream(archive);
             DataInputStream in = new DataInputStream(new GZIPInputStream(file, 1 << 16))) {
            byte[] header = new byte[BLOCK];
            String longName = null;
            while (true) {
                try {
                    in.readFully(header);
                } catch (EOFException e) {
                    break;
                }
                if (isZero(header)) {
                    break;
                }
                String name = string(header, 0, 100);
                String prefix = string(header, 345, 155);
                if (!prefix.isEmpty()) {
                    name = prefix + '/' + name;
                }
                int mode = (int) octal(header, 100, 8);
                long size = octal(header, 124, 12);
                char type = (char) header[156];
                if (type == 'x' || type == 'L') {
                    String data = new String(body(in, size), StandardCharsets.UTF_8);
                    longName = type == 'L' ? data.replace("\0", "") : paxPath(data);
                    continue;
                }
                if (type == 'g') {
                    body(in, size);
                    continue;
                }
                if (longName != null) {
                    name = longName;
                    longName = null;
                }
                boolean directory = type == '5' || name.endsWith("/");
                String relative = stripTopDirectory(name);
                byte[] content = null;
                if (!directory && withContent.test(relative)) {
                    content = body(in, size);
                } else {
                    skip(in, size);
                }
                if (!relative.isEmpty()) {
                    entries.put(relative, new Entry(relative, mode & 07777, directory, content));
                }
            }
        }
        return entries;
    }

    private static String stripTopDirectory(String name) {
        String trimmed = name.endsWith("/") ? name.substring(0, name.length() - 1) : name;
        int slash = trimmed.indexOf('/');
        return slash < 0 ? "" : trimmed.substring(slash + 1);
    }

    private static String paxPath(String records) {
        // records: "<length> <key>=<value>\n" ...
        for (String record : records.split("\n")) {
            int space = record.indexOf(' ');
            if (space > 0 && record.startsWith("path=", space + 1)) {
                return record.substring(space + 1 + "path=".length());
            }
        }
        return null;
    }

    private static byte[] body(DataInputStream in, long size) throws IOException {
        byte[] data = new byte[Math.toIntExact(size)];
        in.readFully(data);
        in.skipNBytes(padding(size));
        return data;
    }

    private static void skip(DataInputStream in, long size) throws IOException {
        in.skipNBytes(size + padding(size));
    }

    private static long padding(long size) {
        return (BLOCK - size % BLOCK) % BLOCK;
    }

    private static boolean isZero(byte[] block) {
        for (byte b : block) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    private static String string(byte[] header, int offset, int length) {
        int end = offset;
        while (end < offset + length && header[end] != 0) {
            end++;
        }
        return new String(header, offset, end - offset, StandardCharsets.UTF_8);
    }

    private static long octal(byte[] header, int offset, int length) {
        long value = 0;
        for (int i = offset; i < offset + length; i++) {
            byte b = header[i];
            if (b == 0 || b == ' ') {
                if (value != 0) {
                    break;
                }
                continue;
            }
            if (b < '0' || b > '7') {
                throw new IllegalArgumentException("bad octal field at offset " + offset);
            }
            value = value * 8 + (b - '0');
        }
        return value;
    }
}
