package org.mpiproxy.protocol;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A job's common environment as ENVIRONMENT carries it once per node and job (docs/protocol-v2.md
 * 5.10): {@code NAME=VALUE} strings, each UTF-8 and ended by one NUL byte, as the variables of the
 * plain form ({@link ExecCommand#encodePlain}), nothing else; named by its SHA-256. A plain EXEC
 * with {@link V2HeaderDescriptor#FLAG_ENVIRONMENT} starts its payload with that digest
 * ({@link #execPayload}); its own variables win over the environment's.
 */
public final class ExecEnvironment {

    /** Length of the digest that names an environment. */
    public static final int DIGEST_LENGTH = 32;

    private ExecEnvironment() {
    }

    /**
     * @param variables the variables, in order
     * @return their encoding
     * @throws IllegalArgumentException when a name is not a variable name or a value holds a NUL
     */
    public static byte[] encode(Map<String, String> variables) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (Map.Entry<String, String> e : variables.entrySet()) {
            if (!ExecCommand.isVariableName(e.getKey())) {
                throw new IllegalArgumentException("'" + e.getKey() + "' is not a variable name");
            }
            if (e.getValue().indexOf('\0') >= 0) {
                throw new IllegalArgumentException("the value of " + e.getKey() + " holds a NUL character");
            }
            out.writeBytes((e.getKey() + "=" + e.getValue()).getBytes(StandardCharsets.UTF_8));
            out.write(0);
        }
        return out.toByteArray();
    }

    /**
     * @param bytes an encoding
     * @return its variables, in order (a later one of a name wins)
     * @throws IllegalArgumentException with a one-line reason when the last string lacks its NUL,
     *                                  a string is not UTF-8 or not {@code NAME=VALUE}
     */
    public static Map<String, String> decode(byte[] bytes) {
        Map<String, String> variables = new LinkedHashMap<>();
        int at = 0;
        int index = 0;
        while (at < bytes.length) {
            int nul = at;
            while (nul < bytes.length && bytes[nul] != 0) {
                nul++;
            }
            if (nul == bytes.length) {
                throw new IllegalArgumentException("environment string " + index + " is not ended by a NUL byte");
            }
            String entry;
            try {
                entry = StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes, at, nul - at)).toString();
            } catch (CharacterCodingException e) {
                throw new IllegalArgumentException("environment string " + index + " is not valid UTF-8");
            }
            int eq = entry.indexOf('=');
            if (eq <= 0 || !ExecCommand.isVariableName(entry.substring(0, eq))) {
                throw new IllegalArgumentException("environment string " + index
                        + " is not NAME=VALUE with NAME of letters, digits and _ (not first a digit)");
            }
            variables.put(entry.substring(0, eq), entry.substring(eq + 1));
            at = nul + 1;
            index++;
        }
        return variables;
    }

    /** @return the SHA-256 of {@code bytes}, which names an environment */
    public static byte[] digest(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * @param digest the environment's digest
     * @param plain  the rank's plain form ({@link ExecCommand#encodePlain})
     * @return the payload of a plain EXEC with {@link V2HeaderDescriptor#FLAG_ENVIRONMENT}
     */
    public static byte[] execPayload(byte[] digest, byte[] plain) {
        if (digest.length != DIGEST_LENGTH) {
            throw new IllegalArgumentException("a digest of " + digest.length + " bytes, not " + DIGEST_LENGTH);
        }
        byte[] payload = new byte[DIGEST_LENGTH + plain.length];
        System.arraycopy(digest, 0, payload, 0, DIGEST_LENGTH);
        System.arraycopy(plain, 0, payload, DIGEST_LENGTH, plain.length);
        return payload;
    }
}
