package org.mpiproxy.mpi.internal.engine;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.mpiproxy.api.MessageRing;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;

/**
 * A link over two rings in shared memory, one each way: a message is one or more {@code BYTE}
 * records, all but the last with {@link MessageRing#MORE_RECORDS} in the tag word (the same records
 * a rank's channel to its proxy carries). Offering writes records as long as the ring has room;
 * polling assembles records into whole messages. Single producer and single consumer per ring.
 */
public final class RingLink implements Link {

    /** Largest record this side writes (smaller when the ring is small). */
    public static final int MAX_RECORD_BYTES = 64 * 1024;

    private static final int BYTE = MpiDatatype.BYTE.code();

    private final MessageRing out;
    private final MessageRing in;
    private final int maxRecord;
    private final Runnable afterOffer;
    private final AutoCloseable owner;
    private ByteBuffer assembly = ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN);
    private int assembled;
    private boolean closed;

    /**
     * @param out        the ring this side produces into
     * @param in         the ring this side consumes
     * @param afterOffer run after records were written (rings the consumer's doorbell), or {@code null}
     * @param owner      closed with the link (the mapped file), or {@code null}
     */
    public RingLink(MessageRing out, MessageRing in, Runnable afterOffer, AutoCloseable owner) {
        this.out = out;
        this.in = in;
        this.afterOffer = afterOffer;
        this.owner = owner;
        this.maxRecord = Math.max(8, Math.min(MAX_RECORD_BYTES, out.capacity() / 4));
    }

    @Override
    public boolean offer(ByteBuffer message) {
        int at = message.position();
        int end = message.limit();
        boolean wrote = false;
        while (at < end) {
            int k = Math.min(maxRecord, end - at);
            int tagWord = at + k < end ? MessageRing.MORE_RECORDS : 0;
            if (!out.offer(BYTE, k, tagWord, message, at, k)) {
                break;
            }
            wrote = true;
            at += k;
        }
        message.position(at);
        if (wrote && afterOffer != null) {
            afterOffer.run();
        }
        return at == end;
    }

    @Override
    public int poll(Sink sink) {
        int delivered = 0;
        while (!in.isEmpty()) {
            int datatype = in.peekDatatype();
            if (datatype != BYTE) {
                throw new CommFailure(MpiErrors.ERR_INTERN, "a record of datatype " + datatype
                        + " on a link that carries whole messages as MPI_BYTE");
            }
            int tagWord = in.peekTagWord();
            int n = in.headRecordElements();
            if (assembly.capacity() < assembled + n) {
                ByteBuffer bigger = ByteBuffer.allocate(Math.max(assembly.capacity() * 2, assembled + n))
                        .order(ByteOrder.LITTLE_ENDIAN);
                bigger.put(0, assembly, 0, assembled);
                assembly = bigger;
            }
            int got = in.pollRecord(BYTE, assembly, assembled, n);
            assembled += got;
            if (got == n && (tagWord & MessageRing.MORE_RECORDS) == 0) {
                int length = assembled;
                assembled = 0;
                sink.accept(assembly, length);
                delivered++;
            }
        }
        return delivered;
    }

    /** @return whether nothing waits to be consumed */
    public boolean idle() {
        return in.isEmpty();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (owner != null) {
            try {
                owner.close();
            } catch (Exception e) {
                // a mapping that does not close cleanly is gone with the process anyway
            }
        }
    }
}
