package org.mpiproxy.protocol;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.mpiproxy.api.ProgramNames;

/**
 * The command line of an EXEC: {@code PROGRAM ARG...} separated by spaces.
 *
 * @param program the program name
 * @param args    its arguments
 */
public record ExecCommand(String program, List<String> args) {

    /** Longest accepted command in bytes. */
    public static final int MAX_LENGTH = 4096;
    /** Most accepted arguments. */
    public static final int MAX_ARGS = 256;

    public ExecCommand {
        args = List.copyOf(args);
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

    /** @return the command as sent: the program and its arguments separated by spaces */
    public String toCommandLine() {
        StringBuilder b = new StringBuilder(program);
        for (String a : args) {
            b.append(' ').append(a);
        }
        return b.toString();
    }
}
