package org.mpiproxy.protocol;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.mpiproxy.api.ProgramNames;

/**
 * The command line of an EXEC, in one of two forms (docs/protocol-v2.md 5.1):
 * <ul>
 * <li>the FreeNOS form, {@code PROGRAM ARG...} separated by spaces ({@link #parse}), run as
 *     {@code PROGRAM --slave <channel> <rank> <size> ARG...};</li>
 * <li>the plain form of a v2 EXEC with the PLAIN flag ({@link #parsePlain}): a little-endian u16
 *     argument count {@code a}, a u16 variable count {@code e}, then {@code 1 + a + e} strings,
 *     each UTF-8 and ended by a NUL byte: PROGRAM, its arguments (any text, spaces included), and
 *     {@code NAME=VALUE} environment variables for the rank; run as given.</li>
 * </ul>
 *
 * @param program     the program name
 * @param args        its arguments
 * @param environment variables the host asks for (plain form only; empty otherwise), in order
 */
public record ExecCommand(String program, List<String> args, Map<String, String> environment) {

    /** Longest accepted command in bytes. */
    public static final int MAX_LENGTH = 4096;
    /** Most accepted arguments. */
    public static final int MAX_ARGS = 256;

    /** Most environment variables in a plain-form command. */
    public static final int MAX_VARIABLES = 1024;

    public ExecCommand {
        args = List.copyOf(args);
        environment = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(environment));
    }

    /**
     * A FreeNOS-form command.
     *
     * @param program the program name
     * @param args    its arguments
     */
    public ExecCommand(String program, List<String> args) {
        this(program, args, Map.of());
    }

    /**
     * Parses a command. Trailing NUL bytes (a C host's terminator) are ignored; the text must be
     * UTF-8 without control characters; runs of spaces separate words.
     *
     * @param buffer the bytes
     * @param offset absolute index of the first byte
     * @param length number of bytes
     * @return the command
     * @throws IllegalArgumentException with a readable message when the command is empty,
     *                                  too long, not valid text or names a bad program
     */
    public static ExecCommand parse(ByteBuffer buffer, int offset, int length) {
        if (length > MAX_LENGTH) {
            throw new IllegalArgumentException("command is " + length + " bytes, more than " + MAX_LENGTH);
        }
        int end = offset + length;
        while (end > offset && buffer.get(end - 1) == 0) {
            end--;
        }
        byte[] bytes = new byte[end - offset];
        buffer.get(offset, bytes);
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes)).toString();
        } catch (java.nio.charset.CharacterCodingException e) {
            throw new IllegalArgumentException("command is not valid UTF-8");
        }
        List<String> words = new ArrayList<>();
        int i = 0;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (c == ' ') {
                i++;
                continue;
            }
            int start = i;
            while (i < text.length() && text.charAt(i) != ' ') {
                char w = text.charAt(i);
                if (w < 0x20 || w == 0x7f) {
                    throw new IllegalArgumentException("command contains control character 0x"
                            + Integer.toHexString(w) + " at byte " + i);
                }
                i++;
            }
            if (words.size() == MAX_ARGS + 1) {
                throw new IllegalArgumentException("command has more than " + MAX_ARGS + " arguments");
            }
            words.add(text.substring(start, i));
        }
        if (words.isEmpty()) {
            throw new IllegalArgumentException("command is empty");
        }
        String program = words.get(0);
        String problem = ProgramNames.problem(program);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        return new ExecCommand(program, words.subList(1, words.size()));
    }

    /**
     * Parses a plain-form command (see the class comment).
     *
     * @param buffer the bytes
     * @param offset absolute index of the first byte
     * @param length number of bytes
     * @return the command
     * @throws IllegalArgumentException with a readable one-line message when the counts do not
     *                                  match the strings, a string is not UTF-8 or holds a control
     *                                  character where none may be, a variable name is not a name,
     *                                  or the program name is bad
     */
    public static ExecCommand parsePlain(ByteBuffer buffer, int offset, int length) {
        if (length < 4) {
            throw new IllegalArgumentException("plain command is " + length + " bytes, shorter than its two counts");
        }
        int argc = (buffer.get(offset) & 0xff) | (buffer.get(offset + 1) & 0xff) << 8;
        int envc = (buffer.get(offset + 2) & 0xff) | (buffer.get(offset + 3) & 0xff) << 8;
        if (argc > MAX_ARGS) {
            throw new IllegalArgumentException("command has " + argc + " arguments, more than " + MAX_ARGS);
        }
        if (envc > MAX_VARIABLES) {
            throw new IllegalArgumentException("command has " + envc + " environment variables, more than "
                    + MAX_VARIABLES);
        }
        int end = offset + length;
        int at = offset + 4;
        String[] strings = new String[1 + argc + envc];
        for (int i = 0; i < strings.length; i++) {
            int nul = at;
            while (nul < end && buffer.get(nul) != 0) {
                nul++;
            }
            if (nul == end) {
                throw new IllegalArgumentException("plain command ends after " + i + " of its " + strings.length
                        + " strings (PROGRAM, " + argc + " arguments, " + envc + " variables)");
            }
            byte[] bytes = new byte[nul - at];
            buffer.get(at, bytes);
            try {
                strings[i] = StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes)).toString();
            } catch (java.nio.charset.CharacterCodingException e) {
                throw new IllegalArgumentException("string " + i + " of the plain command is not valid UTF-8");
            }
            at = nul + 1;
        }
        if (at != end) {
            throw new IllegalArgumentException("plain command has " + (end - at) + " bytes after its "
                    + strings.length + " strings");
        }
        String program = strings[0];
        String problem = ProgramNames.problem(program);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        List<String> args = List.of(strings).subList(1, 1 + argc);
        Map<String, String> env = new LinkedHashMap<>();
        for (int i = 1 + argc; i < strings.length; i++) {
            String entry = strings[i];
            int eq = entry.indexOf('=');
            String name = eq < 0 ? entry : entry.substring(0, eq);
            if (eq <= 0 || !isVariableName(name)) {
                throw new IllegalArgumentException("environment entry '" + printable(entry)
                        + "' is not NAME=VALUE with NAME of letters, digits and _ (not first a digit)");
            }
            env.put(name, entry.substring(eq + 1));
        }
        return new ExecCommand(program, args, env);
    }

    /**
     * @return this command in plain form, ready to be an EXEC payload
     * @throws IllegalArgumentException when a string holds a NUL byte, a variable name is not a
     *                                  name, or there are too many arguments or variables
     */
    public byte[] encodePlain() {
        if (args.size() > MAX_ARGS || environment.size() > MAX_VARIABLES) {
            throw new IllegalArgumentException("at most " + MAX_ARGS + " arguments and " + MAX_VARIABLES
                    + " environment variables");
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        out.write(args.size() & 0xff);
        out.write(args.size() >>> 8);
        out.write(environment.size() & 0xff);
        out.write(environment.size() >>> 8);
        List<String> strings = new ArrayList<>(1 + args.size() + environment.size());
        strings.add(program);
        strings.addAll(args);
        for (Map.Entry<String, String> e : environment.entrySet()) {
            if (!isVariableName(e.getKey())) {
                throw new IllegalArgumentException("'" + printable(e.getKey()) + "' is not a variable name");
            }
            strings.add(e.getKey() + "=" + e.getValue());
        }
        for (String s : strings) {
            if (s.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("'" + printable(s) + "' holds a NUL character");
            }
            out.writeBytes(s.getBytes(StandardCharsets.UTF_8));
            out.write(0);
        }
        return out.toByteArray();
    }

    /**
     * @param name a candidate
     * @return whether it is a portable environment variable name: letters, digits and {@code _},
     *         not starting with a digit
     */
    public static boolean isVariableName(String name) {
        if (name.isEmpty() || name.charAt(0) >= '0' && name.charAt(0) <= '9') {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9')) {
                return false;
            }
        }
        return true;
    }

    private static String printable(String text) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < text.length() && b.length() < 80; i++) {
            char c = text.charAt(i);
            b.append(c < 0x20 || c == 0x7f ? '?' : c);
        }
        return b.toString();
    }

    /** @return the command as sent: the program and its arguments separated by spaces */
    public String toCommandLine() {
        StringBuilder b = new StringBuilder(program);
        for (String a : args) {
            b.append(' ').append(a);
        }
        return b.toString();
    }
}
