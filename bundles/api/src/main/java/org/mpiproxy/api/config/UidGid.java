package org.mpiproxy.api.config;

/** A configuration value of the form {@code <uid>:<gid>} (numeric, as the kernel knows them). */
public final class UidGid {

    private UidGid() {
    }

    /**
     * @param key   the configuration key, named in the error
     * @param value {@code <uid>:<gid>}, or empty
     * @return {uid, gid}, or {@code null} for an empty value
     * @throws IllegalArgumentException {@code key=value must be a numeric <uid>:<gid>}
     */
    public static long[] parse(String key, String value) {
        if (value == null || value.isBlank()) {
            return null;
        }
        String[] parts = value.trim().split(":");
        try {
            if (parts.length == 2) {
                long u = Long.parseLong(parts[0].trim());
                long g = Long.parseLong(parts[1].trim());
                if (u >= 0 && g >= 0) {
                    return new long[] {u, g};
                }
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(key + "=" + value + " must be a numeric <uid>:<gid>");
    }
}
