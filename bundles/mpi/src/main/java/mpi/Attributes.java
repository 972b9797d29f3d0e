package mpi;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import org.mpiproxy.mpi.internal.engine.Engine;

/**
 * The attributes of one communicator ({@link Comm#setAttr} and the others) and the keys of this
 * process ({@link Comm#createKeyval}). As in Open MPI's bindings, a value is kept serialized: it
 * must be {@link java.io.Serializable}, {@code getAttr} returns a copy of it as it was set, and
 * {@code dup} copies every attribute to the new communicator; {@code free} deletes them. The
 * predefined keys ({@link MPI#TAG_UB}, {@link MPI#HOST}, {@link MPI#IO}, {@link MPI#WTIME_IS_GLOBAL})
 * are read-only and answered on every communicator. Callers hold the lock.
 */
final class Attributes {

    static final int TAG_UB = 0;
    static final int HOST = 1;
    static final int IO = 2;
    static final int WTIME_IS_GLOBAL = 3;
    private static final int PREDEFINED = 4;

    private static int nextKeyval = PREDEFINED;
    private static final Set<Integer> live = new HashSet<>();

    private final Map<Integer, byte[]> values = new HashMap<>();

    /** @return a new key */
    static int create() {
        int k = nextKeyval++;
        live.add(k);
        return k;
    }

    /** Frees a key: no attribute can be set with it any more; those set stay until deleted. */
    static void free(int keyval) throws MPIException {
        writable("freeKeyval", keyval);
        live.remove(keyval);
    }

    private static void writable(String call, int keyval) throws MPIException {
        if (keyval >= 0 && keyval < PREDEFINED) {
            throw new MPIException(MPI.ERR_KEYVAL, call + ": key " + keyval + " is predefined (read-only)");
        }
        if (!live.contains(keyval)) {
            throw new MPIException(MPI.ERR_KEYVAL, call + ": key " + keyval + " was not made by Comm.createKeyval"
                    + " or has been freed");
        }
    }

    private static void known(String call, int keyval) throws MPIException {
        if (keyval < PREDEFINED || keyval >= nextKeyval) {
            throw new MPIException(MPI.ERR_KEYVAL, call + ": key " + keyval + " was never made by Comm.createKeyval");
        }
    }

    void set(int keyval, Object value) throws MPIException {
        writable("setAttr", keyval);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(value);
        } catch (IOException e) {
            throw new MPIException(MPI.ERR_ARG, "setAttr: the value of key " + keyval + " cannot be serialized: " + e);
        }
        values.put(keyval, bytes.toByteArray());
    }

    /** @return the value (a copy), {@code null} when none is set */
    Object get(int keyval) throws MPIException {
        switch (keyval) {
            case TAG_UB:
                return Engine.TAG_UB;
            case HOST:
                return MPI.PROC_NULL;
            case IO:
                return MPI.ANY_SOURCE;
            case WTIME_IS_GLOBAL:
                return Boolean.FALSE;
            default:
                break;
        }
        known("getAttr", keyval);
        byte[] stored = values.get(keyval);
        if (stored == null) {
            return null;
        }
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(stored))) {
            return in.readObject();
        } catch (IOException | ClassNotFoundException e) {
            throw new MPIException(MPI.ERR_OTHER, "getAttr: the value of key " + keyval + " cannot be read back: " + e);
        }
    }

    void delete(int keyval) throws MPIException {
        if (keyval >= 0 && keyval < PREDEFINED) {
            throw new MPIException(MPI.ERR_KEYVAL, "deleteAttr: key " + keyval + " is predefined (read-only)");
        }
        known("deleteAttr", keyval);
        values.remove(keyval);
    }

    /** Takes every attribute of {@code from}, as {@code dup} does. */
    void copy(Attributes from) {
        values.putAll(from.values);
    }

    void clear() {
        values.clear();
    }
}
