package org.mpiproxy.protocol;

import java.nio.ByteBuffer;
import java.security.DigestException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * HMAC-SHA256 (RFC 2104) over the JDK's SHA-256 that allocates nothing per tag: the JDK's
 * {@code Mac.doFinal} returns a new array for every tag, and v2 computes three per datagram on
 * the hot path (docs/protocol-v2.md 3.2 defines the MAC; the tags are the same bit for bit).
 * {@code H((K ^ opad) || H((K ^ ipad) || m))} with the key padded to SHA-256's 64-byte block
 * (a longer key is hashed first). Not thread-safe: one instance per thread.
 */
final class HmacSha256 {

    /** The tag's length in bytes. */
    static final int LENGTH = 32;
    private static final int BLOCK = 64;

    private final MessageDigest digest;
    private final byte[] innerPad = new byte[BLOCK];
    private final byte[] outerPad = new byte[BLOCK];
    private final byte[] inner = new byte[LENGTH];

    /** @param key the secret key, any length */
    HmacSha256(byte[] key) {
        try {
            digest = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available", e);
        }
        byte[] k = key.length > BLOCK ? digest.digest(key) : key;
        for (int i = 0; i < BLOCK; i++) {
            byte b = i < k.length ? k[i] : 0;
            innerPad[i] = (byte) (b ^ 0x36);
            outerPad[i] = (byte) (b ^ 0x5c);
        }
        if (k != key) {
            Arrays.fill(k, (byte) 0);
        }
        digest.update(innerPad);
    }

    /** Adds the bytes of {@code buffer} from {@code offset} to {@code offset + length}; its position and limit stay. */
    void update(ByteBuffer buffer, int offset, int length) {
        int position = buffer.position();
        int limit = buffer.limit();
        buffer.limit(offset + length).position(offset);
        digest.update(buffer);
        buffer.limit(limit).position(position);
    }

    /** Writes the tag of everything added since the last tag into {@code out} at {@code at}, and starts the next. */
    void tag(byte[] out, int at) {
        try {
            digest.digest(inner, 0, LENGTH);
            digest.update(outerPad);
            digest.update(inner);
            digest.digest(out, at, LENGTH);
        } catch (DigestException e) {
            throw new IllegalStateException(e);
        }
        digest.update(innerPad);
    }
}
