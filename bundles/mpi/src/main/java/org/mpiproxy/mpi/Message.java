package org.mpiproxy.mpi;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;

/**
 * One whole message as it travels: its datatype code (docs/protocol-v2.md 3.3), its tag and
 * its elements as little-endian, densely packed bytes. {@link Mpi#recv(int, int)} returns the
 * messages that arrive whatever their datatype; {@link Mpi#send(Message, int)} sends one, so a
 * program can pass on or send back a message it does not interpret.
 * <p>
 * Immutable: the elements are a copy (for {@link #of}) or the library's own buffer, seen only
 * through read-only views. Thread-safe.
 */
public final class Message {

    private final int source;
    private final int tag;
    private final int datatype;
    private final ByteBuffer elements;

    private Message(int source, int tag, int datatype, ByteBuffer elements) {
        this.source = source;
        this.tag = tag;
        this.datatype = datatype;
        this.elements = elements;
    }

    /**
     * A message to send.
     *
     * @param datatype MPI datatype code, 0..12 (v1 carries 0..7 only)
     * @param tag      the tag, 0 .. 2^31-1 (v1 carries tag 0 only)
     * @param elements the elements, little-endian and densely packed: at least one, a whole
     *                 number of them; copied
     * @return the message; its {@link #source()} is {@link Mpi#ANY_SOURCE}
     * @throws MpiException {@code MPI_ERR_TYPE} for an unknown datatype, {@code MPI_ERR_TAG} for
     *                      a negative tag, {@code MPI_ERR_COUNT} when the bytes are not a
     *                      positive whole number of elements, {@code MPI_ERR_BUFFER} for
     *                      {@code null}
     */
    public static Message of(int datatype, int tag, byte[] elements) {
        int size = MpiDatatype.sizeOf(datatype);
        if (size <= 0) {
            throw new MpiException(MpiErrors.ERR_TYPE, "datatype=" + datatype + " is not an MPI datatype code 0.."
                    + (MpiDatatype.values().length - 1));
        }
        if (tag < 0) {
            throw new MpiException(MpiErrors.ERR_TAG, "tag=" + tag + " is negative");
        }
        if (elements == null) {
            throw new MpiException(MpiErrors.ERR_BUFFER, "elements is null");
        }
        if (elements.length == 0 || elements.length % size != 0) {
            throw new MpiException(MpiErrors.ERR_COUNT, elements.length + " bytes are not a positive whole number of MPI_"
                    + MpiDatatype.ofCode(datatype) + " elements of " + size + " bytes");
        }
        return new Message(Mpi.ANY_SOURCE, tag, datatype, ByteBuffer.wrap(elements.clone()));
    }

    /** A received message over the library's buffer, from its position to its limit. */
    static Message received(int source, int tag, int datatype, ByteBuffer data) {
        return new Message(source, tag, datatype, data.slice());
    }

    /** @return the rank that sent the message; {@link Mpi#ANY_SOURCE} for one made by {@link #of} */
    public int source() {
        return source;
    }

    /** @return the message's tag, &gt;= 0 (0 for every message over protocol v1) */
    public int tag() {
        return tag;
    }

    /** @return the MPI datatype code of the elements (docs/protocol-v2.md 3.3) */
    public int datatype() {
        return datatype;
    }

    /** @return the number of elements, &gt;= 1 */
    public int count() {
        return elements.remaining() / MpiDatatype.sizeOf(datatype);
    }

    /** @return the size of the elements in bytes: {@link #count()} times the datatype's size */
    public int length() {
        return elements.remaining();
    }

    /**
     * @return a read-only little-endian view of the elements, position 0, limit
     *         {@link #length()}; each call returns a new view
     */
    public ByteBuffer elements() {
        return elements.asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
    }

    /** @return a copy of the elements' bytes */
    public byte[] toByteArray() {
        byte[] copy = new byte[elements.remaining()];
        elements.get(elements.position(), copy);
        return copy;
    }

    /** @return for diagnostics: {@code MPI_SHORT x 1000, tag 3, from rank 1} */
    @Override
    public String toString() {
        MpiDatatype type = MpiDatatype.ofCode(datatype);
        return "MPI_" + type + " x " + count() + ", tag " + tag + (source == Mpi.ANY_SOURCE ? "" : ", from rank " + source);
    }
}
