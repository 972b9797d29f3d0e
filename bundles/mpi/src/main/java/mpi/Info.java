package mpi;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Hints as keys and values ({@code MPI_Info}): keys are kept in the order they were first set.
 * Keys have at most {@code MPI.MAX_INFO_KEY} characters, values at most
 * {@code MPI.MAX_INFO_VAL}. This library takes no hint from them; they are kept for the program.
 * A failure goes to {@code MPI.COMM_WORLD}'s error handler.
 */
public final class Info implements Freeable {

    /** {@code null} for {@code MPI.INFO_NULL} and once freed. */
    private Map<String, String> entries;

    /** An empty info object. */
    public Info() throws MPIException {
        MPI.check();
        entries = new LinkedHashMap<>();
    }

    Info(Map<String, String> entries) {
        this.entries = entries;
    }

    private Map<String, String> entries(String call) throws MPIException {
        MPI.check();
        if (entries == null) {
            throw fail(MPI.ERR_INFO, call + " on " + (this == MPI.INFO_NULL ? "MPI.INFO_NULL" : "a freed info object"));
        }
        return entries;
    }

    private static MPIException fail(int errorClass, String message) {
        return MPI.raise(new MPIException(errorClass, message));
    }

    private static String key(String call, String key) throws MPIException {
        if (key == null || key.isEmpty() || key.length() > MPI.MAX_INFO_KEY) {
            throw fail(MPI.ERR_INFO_KEY, call + ": key " + (key == null ? "null" : "'" + key + "'") + " is not 1.."
                    + MPI.MAX_INFO_KEY + " characters");
        }
        return key;
    }

    /** Sets {@code key} to {@code value}, replacing its value if it has one. */
    public void set(String key, String value) throws MPIException {
        Map<String, String> e = entries("set");
        key("set", key);
        if (value == null || value.isEmpty() || value.length() > MPI.MAX_INFO_VAL) {
            throw fail(MPI.ERR_INFO_VALUE, "set: the value of '" + key + "' is not 1.." + MPI.MAX_INFO_VAL
                    + " characters");
        }
        e.put(key, value);
    }

    /** @return the value of {@code key}, {@code null} when it has none */
    public String get(String key) throws MPIException {
        return entries("get").get(key("get", key));
    }

    /** Removes {@code key}. */
    public void delete(String key) throws MPIException {
        if (entries("delete").remove(key("delete", key)) == null) {
            throw fail(MPI.ERR_INFO_NOKEY, "delete: key '" + key + "' is not set");
        }
    }

    /** @return keys set */
    public int size() throws MPIException {
        return entries("size").size();
    }

    /** @return key {@code i} (0..size-1), in the order the keys were set */
    public String getKey(int i) throws MPIException {
        Map<String, String> e = entries("getKey");
        if (i < 0 || i >= e.size()) {
            throw fail(MPI.ERR_ARG, "getKey: " + i + " is not 0.." + (e.size() - 1));
        }
        return new ArrayList<>(e.keySet()).get(i);
    }

    /** @return a new info object with the same keys and values */
    public Info dup() throws MPIException {
        return new Info(new LinkedHashMap<>(entries("dup")));
    }

    /**
     * As {@link #dup}, under the name Open MPI's bindings give it.
     *
     * @throws RuntimeException carrying the {@link MPIException} where {@code dup} would throw one
     */
    @Override
    public Info clone() {
        try {
            return dup();
        } catch (MPIException e) {
            throw new RuntimeException(e.getMessage(), e);
        }
    }

    /** Frees the info object: it becomes null ({@link #isNull}). */
    @Override
    public void free() throws MPIException {
        entries("free");
        entries = null;
    }

    /** @return whether this is {@code MPI.INFO_NULL} or was freed */
    public boolean isNull() {
        return entries == null;
    }

    @Override
    public String toString() {
        return entries == null ? "MPI.INFO_NULL" : "Info" + entries;
    }
}
