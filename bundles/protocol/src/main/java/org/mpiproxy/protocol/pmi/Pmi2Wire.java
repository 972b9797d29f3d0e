package org.mpiproxy.protocol.pmi;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One message of the PMI-2 wire protocol: a 6-byte decimal length (left-aligned, padded with
 * spaces), then that many bytes of {@code cmd=NAME;key=value;...;}, UTF-8. A {@code ;} inside a
 * value is doubled ({@code ;;}); a key ends at its first {@code =}. Immutable.
 *
 * @param command    the value of {@code cmd}
 * @param attributes the other attributes, in order
 */
public record Pmi2Wire(String command, Map<String, String> attributes) {

    /** Bytes of the length field before every message. */
    public static final int LENGTH_FIELD = 6;
    /**
     * Longest message body a client may send: room for a {@code kvs-put} of a value of
     * {@link PmiSession#VALUE_MAX} bytes, every one of them an escaped {@code ;}, with its key.
     */
    public static final int MAX_BODY = 8192;

    public Pmi2Wire {
        attributes = Collections.unmodifiableMap(new LinkedHashMap<>(attributes));
    }

    /**
     * @param field the 6 bytes of a length field, as ISO-8859-1 text
     * @return the body's length
     * @throws IllegalArgumentException when it is not a decimal number (spaces around it allowed)
     *                                  in 1..{@link #MAX_BODY}
     */
    public static int length(String field) {
        String digits = field.strip();
        if (digits.isEmpty() || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new IllegalArgumentException("length field '" + PmiLine.shorten(printable(field))
                    + "' is not a decimal number");
        }
        long n = digits.length() > 7 ? Long.MAX_VALUE : Long.parseLong(digits);
        if (n < 1 || n > MAX_BODY) {
            throw new IllegalArgumentException("message of " + n + " bytes, not 1.." + MAX_BODY);
        }
        return (int) n;
    }

    /**
     * @param body a message without its length field
     * @return the parsed message
     * @throws IllegalArgumentException with a one-line reason when it holds a control character,
     *                                  does not start with {@code cmd=}, has an attribute without
     *                                  {@code =} or without its closing {@code ;}, or names a key twice
     */
    public static Pmi2Wire parse(String body) {
        for (int i = 0; i < body.length(); i++) {
            char c = body.charAt(i);
            if (c < 0x20 && c != '\t' || c == 0x7f) {
                throw new IllegalArgumentException("message holds control character 0x" + Integer.toHexString(c));
            }
        }
        List<String[]> pairs = new ArrayList<>();
        int at = 0;
        while (at < body.length()) {
            int eq = body.indexOf('=', at);
            if (eq < 0) {
                throw new IllegalArgumentException("'" + PmiLine.shorten(body.substring(at)) + "' is not key=value;");
            }
            String key = body.substring(at, eq);
            if (key.isEmpty() || key.indexOf(';') >= 0) {
                throw new IllegalArgumentException("'" + PmiLine.shorten(body.substring(at, eq + 1))
                        + "' is not a key");
            }
            StringBuilder value = new StringBuilder();
            int i = eq + 1;
            while (true) {
                if (i >= body.length()) {
                    throw new IllegalArgumentException("the value of " + PmiLine.shorten(key) + " has no closing ';'");
                }
                char c = body.charAt(i);
                if (c == ';') {
                    if (i + 1 < body.length() && body.charAt(i + 1) == ';') {
                        value.append(';');
                        i += 2;
                        continue;
                    }
                    break;
                }
                value.append(c);
                i++;
            }
            pairs.add(new String[] {key, value.toString()});
            at = i + 1;
        }
        if (pairs.isEmpty() || !pairs.get(0)[0].equals("cmd")) {
            throw new IllegalArgumentException(pairs.isEmpty() ? "empty message"
                    : "message starts with '" + PmiLine.shorten(pairs.get(0)[0]) + "', not cmd=");
        }
        Map<String, String> attributes = new LinkedHashMap<>();
        for (String[] pair : pairs.subList(1, pairs.size())) {
            if (attributes.putIfAbsent(pair[0], pair[1]) != null) {
                throw new IllegalArgumentException("key " + PmiLine.shorten(pair[0]) + " twice");
            }
        }
        return new Pmi2Wire(pairs.get(0)[1], attributes);
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
     * @param attributes keys and values, alternating ({@code null} values are left out)
     * @return the wire text: the length field, then {@code cmd=COMMAND;k=v;...;}
     */
    public static String format(String command, String... attributes) {
        StringBuilder b = new StringBuilder("cmd=").append(command).append(';');
        for (int i = 0; i + 1 < attributes.length; i += 2) {
            if (attributes[i + 1] != null) {
                b.append(attributes[i]).append('=').append(attributes[i + 1].replace(";", ";;")).append(';');
            }
        }
        int length = b.toString().getBytes(StandardCharsets.UTF_8).length;
        String field = Integer.toString(length);
        return field + " ".repeat(Math.max(0, LENGTH_FIELD - field.length())) + b;
    }

    private static String printable(String text) {
        StringBuilder b = new StringBuilder();
        for (char c : text.toCharArray()) {
            b.append(c < 0x20 || c >= 0x7f ? '?' : c);
        }
        return b.toString();
    }
}
