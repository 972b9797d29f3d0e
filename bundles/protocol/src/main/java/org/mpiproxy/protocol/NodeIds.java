package org.mpiproxy.protocol;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/** The v2 node id: the first 8 bytes of SHA-256 over the node's name (UTF-8), read little-endian. */
public final class NodeIds {

    private NodeIds() {
    }

    /**
     * @param nodeName the node's name ({@code node.name} of the proxy; the host part of a hostfile line)
     * @return its node id
     */
    public static long of(String nodeName) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(nodeName.getBytes(StandardCharsets.UTF_8));
            return ByteBuffer.wrap(digest).order(ByteOrder.LITTLE_ENDIAN).getLong(0);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available", e);
        }
    }
}
