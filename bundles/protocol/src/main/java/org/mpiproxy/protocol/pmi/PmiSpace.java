package org.mpiproxy.protocol.pmi;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A job's key-value space as one place (a node's proxy, or the launcher) sees it: what its own
 * ranks put, and what the fences brought from everywhere. A key is set once. The pairs travel
 * between places as {@link #encode fence payloads}: {@code key=value} strings, each ended by a
 * NUL byte. Not thread-safe.
 */
public final class PmiSpace {

    private final Map<String, String> pairs = new HashMap<>();

    /**
     * @return {@code null} when stored, else why not
     */
    public String put(String key, String value) {
        String old = pairs.putIfAbsent(key, value);
        return old == null || old.equals(value) ? null : "of key " + PmiLine.shorten(key) + ", which is already set";
    }

    /** @return the value, or {@code null} */
    public String get(String key) {
        return pairs.get(key);
    }

    /** @return the number of pairs */
    public int size() {
        return pairs.size();
    }

    /**
     * Takes what a fence brought; a key already set keeps its value.
     *
     * @param fenced pairs
     */
    public void merge(Map<String, String> fenced) {
        fenced.forEach(pairs::putIfAbsent);
    }

    /**
     * Cuts pairs into payloads of at most {@code maxPayload} bytes each.
     *
     * @param fenced     the pairs, in order
     * @param maxPayload the largest payload; a pair must fit one
     * @return the payloads, at least one (empty when there are no pairs)
     * @throws IllegalArgumentException when one pair does not fit a payload
     */
    public static List<byte[]> encode(Map<String, String> fenced, int maxPayload) {
        List<byte[]> payloads = new ArrayList<>();
        java.io.ByteArrayOutputStream current = new java.io.ByteArrayOutputStream();
        for (Map.Entry<String, String> e : fenced.entrySet()) {
            byte[] pair = (e.getKey() + "=" + e.getValue()).getBytes(StandardCharsets.UTF_8);
            if (pair.length + 1 > maxPayload) {
                throw new IllegalArgumentException("the pair of key " + PmiLine.shorten(e.getKey()) + " takes "
                        + (pair.length + 1) + " bytes, more than a payload's " + maxPayload);
            }
            if (current.size() + pair.length + 1 > maxPayload) {
                payloads.add(current.toByteArray());
                current.reset();
            }
            current.writeBytes(pair);
            current.write(0);
        }
        payloads.add(current.toByteArray());
        return payloads;
    }

    /**
     * @param payload bytes as {@link #encode} made them
     * @param offset  where they start
     * @param length  how many
     * @param into    where the pairs go
     * @throws IllegalArgumentException when a pair has no {@code =}, is not UTF-8 or lacks its NUL
     */
    public static void decode(java.nio.ByteBuffer payload, int offset, int length, Map<String, String> into) {
        int end = offset + length;
        int at = offset;
        Map<String, String> pairs = new LinkedHashMap<>();
        while (at < end) {
            int nul = at;
            while (nul < end && payload.get(nul) != 0) {
                nul++;
            }
            if (nul == end) {
                throw new IllegalArgumentException("the last pair has no NUL byte");
            }
            byte[] bytes = new byte[nul - at];
            payload.get(at, bytes);
            String pair;
            try {
                pair = StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(bytes)).toString();
            } catch (java.nio.charset.CharacterCodingException e) {
                throw new IllegalArgumentException("a pair is not valid UTF-8");
            }
            int eq = pair.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("'" + PmiLine.shorten(pair) + "' is not key=value");
            }
            pairs.put(pair.substring(0, eq), pair.substring(eq + 1));
            at = nul + 1;
        }
        into.putAll(pairs);
    }
}
