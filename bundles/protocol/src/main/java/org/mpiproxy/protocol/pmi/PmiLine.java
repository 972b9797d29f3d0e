package org.mpiproxy.protocol.pmi;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One line of the PMI-1 wire protocol: {@code cmd=NAME key=value ...} (or {@code mcmd=NAME} for
 * the multi-line commands), attributes separated by spaces, without the line end. Values hold
 * no spaces. Immutable.
 *
 * @param command    the command, the value of {@code cmd} (or {@code mcmd})
 * @param multiLine  whether it came as {@code mcmd=} (spawn)
 * @param attributes the other attributes, in order
 */
public record PmiLine(String command, boolean multiLine, Map<String, String> attributes) {

    /**
     * Longest line a client may send, its line end included: room for a {@code put} of a value of
     * {@link PmiSession#VALUE_MAX} characters with its key and space name.
     */
    public static final int MAX_LINE = 4096;

    public PmiLine {
        attributes = Collections.unmodifiableMap(new LinkedHashMap<>(attributes));
    }

    /**
     * @param text a line without its line end
     * @return the parsed line
     * @throws IllegalArgumentException with a one-line reason when it is longer than
     *                                  {@link #MAX_LINE}, holds a control character, does not
     *                                  start with {@code cmd=} or {@code mcmd=}, or has a token
     *                                  without {@code =}
     */
    public static PmiLine parse(String text) {
        if (text.length() + 1 > MAX_LINE) {
            throw new IllegalArgumentException("line of " + text.length() + " characters, more than " + (MAX_LINE - 1));
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x20 && c != '\t' || c == 0x7f) {
                throw new IllegalArgumentException("line holds control character 0x" + Integer.toHexString(c));
            }
        }
        String command = null;
        boolean multi = false;
        Map<String, String> attributes = new LinkedHashMap<>();
        for (String token : text.strip().split("[ \t]+")) {
            if (token.isEmpty()) {
                continue;
            }
            int eq = token.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("'" + shorten(token) + "' is not key=value");
            }
            String key = token.substring(0, eq);
            String value = token.substring(eq + 1);
            if (command == null) {
                if (!key.equals("cmd") && !key.equals("mcmd")) {
                    throw new IllegalArgumentException("line starts with '" + shorten(key) + "', not cmd= or mcmd=");
                }
                command = value;
                multi = key.equals("mcmd");
            } else {
                attributes.put(key, value);
            }
        }
        if (command == null) {
            throw new IllegalArgumentException("empty line");
        }
        return new PmiLine(command, multi, attributes);
    }

    /**
     * @param key an attribute
     * @return its value, or {@code null}
     */
    public String get(String key) {
        return attributes.get(key);
    }

    /**
     * @param command    the command
     * @param attributes keys and values, alternating
     * @return the wire text {@code cmd=COMMAND k=v ...} with its line end
     */
    public static String format(String command, String... attributes) {
        StringBuilder b = new StringBuilder("cmd=").append(command);
        for (int i = 0; i + 1 < attributes.length; i += 2) {
            b.append(' ').append(attributes[i]).append('=').append(attributes[i + 1]);
        }
        return b.append('\n').toString();
    }

    /**
     * The line that passes a rank's put on to the job's launcher: {@code cmd=put key=K value=V},
     * or, when K or V hold what a PMI-1 line cannot carry (a PMI-2 value may hold spaces),
     * {@code cmd=put encoding=url key=K value=V} with both URL-encoded as UTF-8.
     *
     * @return the line, without its line end
     */
    public static String putLine(String key, String value) {
        return pairLine("put", key, value);
    }

    /**
     * As {@link #putLine}, for another command with a key and a value ({@code putnodeattr}).
     *
     * @return the line, without its line end
     */
    public static String pairLine(String command, String key, String value) {
        if (plain(key) && plain(value)) {
            return "cmd=" + command + " key=" + key + " value=" + value;
        }
        return "cmd=" + command + " encoding=url key=" + java.net.URLEncoder.encode(key, StandardCharsets.UTF_8)
                + " value=" + java.net.URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    /**
     * @param put a {@code cmd=put} line as {@link #putLine} made it (or another {@link #pairLine})
     * @return its key and value
     * @throws IllegalArgumentException when it lacks {@code key=} or {@code value=}, or names an
     *                                  encoding other than {@code url}, or its encoding is broken
     */
    public static Map.Entry<String, String> putOf(PmiLine put) {
        String key = put.get("key");
        String value = put.get("value");
        String encoding = put.get("encoding");
        if (key == null || value == null) {
            throw new IllegalArgumentException(put.command() + " without key= or value=");
        }
        if (encoding == null) {
            return Map.entry(key, value);
        }
        if (!encoding.equals("url")) {
            throw new IllegalArgumentException(put.command() + " with encoding=" + shorten(encoding) + ", not url");
        }
        return Map.entry(java.net.URLDecoder.decode(key, StandardCharsets.UTF_8),
                java.net.URLDecoder.decode(value, StandardCharsets.UTF_8));
    }

    private static boolean plain(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c <= 0x20 || c == 0x7f) {
                return false;
            }
        }
        return true;
    }

    /** @return {@code text}, cut to 40 characters for a log line */
    public static String shorten(String text) {
        return text.length() <= 40 ? text : text.substring(0, 40) + "...";
    }
}
