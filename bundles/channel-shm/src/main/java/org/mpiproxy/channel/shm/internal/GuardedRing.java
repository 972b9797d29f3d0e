package org.mpiproxy.channel.shm.internal;

import java.nio.ByteBuffer;

import org.mpiproxy.api.MessageRing;
import org.mpiproxy.api.RingFaultException;

/**
 * A ring of a {@link GuardedRankChannel}: every call goes to the mapped ring, and the
 * {@link InternalError} the JVM raises when the ring's shared memory fails under the access (a
 * page a full file system cannot give, a file cut shorter) leaves as a {@link RingFaultException}
 * naming the channel. Nothing else changes: the same results, the same allocation-free calls,
 * the same threading rules as {@link MessageRing}.
 */
final class GuardedRing implements MessageRing {

    private final MessageRing ring;
    private final GuardedRankChannel channel;
    private final String name;

    /**
     * @param ring    the mapped ring
     * @param channel its channel, which names a fault
     * @param name    the ring's name in a fault ({@code toRank}, {@code fromRank})
     */
    GuardedRing(MessageRing ring, GuardedRankChannel channel, String name) {
        this.ring = ring;
        this.channel = channel;
        this.name = name;
    }

    /** @return the ring error for {@code e}, raised by the caller */
    private RingFaultException fault(InternalError e) {
        return channel.fault(name, e);
    }

    @Override
    public boolean offer(int datatype, int count, ByteBuffer src, int offset, int length) {
        try {
            return ring.offer(datatype, count, src, offset, length);
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public boolean offer(int datatype, int count, int tagWord, ByteBuffer src, int offset, int length) {
        try {
            return ring.offer(datatype, count, tagWord, src, offset, length);
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public int poll(int datatype, ByteBuffer dst, int offset, int maxElements) {
        try {
            return ring.poll(datatype, dst, offset, maxElements);
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public int peekDatatype() {
        try {
            return ring.peekDatatype();
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public long availableElements(int datatype) {
        try {
            return ring.availableElements(datatype);
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public long availableElements(int datatype, long limit) {
        try {
            return ring.availableElements(datatype, limit);
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public long doorbell() {
        try {
            return ring.doorbell();
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public void doorbell(long encoded) {
        try {
            ring.doorbell(encoded);
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public boolean takeDoorbell(long encoded) {
        try {
            return ring.takeDoorbell(encoded);
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public boolean producerRingsDoorbell() {
        try {
            return ring.producerRingsDoorbell();
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public void producerRingsDoorbell(boolean rings) {
        try {
            ring.producerRingsDoorbell(rings);
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public boolean isEmpty() {
        try {
            return ring.isEmpty();
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public int freeBytes() {
        try {
            return ring.freeBytes();
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public long bytesWritten() {
        try {
            return ring.bytesWritten();
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public long bytesRead() {
        try {
            return ring.bytesRead();
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public int peekTagWord() {
        try {
            return ring.peekTagWord();
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public int headRecordElements() {
        try {
            return ring.headRecordElements();
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public int pollRecord(int datatype, ByteBuffer dst, int offset, int maxElements) {
        try {
            return ring.pollRecord(datatype, dst, offset, maxElements);
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public long producerMark() {
        try {
            return ring.producerMark();
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public void producerMark(long mark) {
        try {
            ring.producerMark(mark);
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public long consumerMark() {
        try {
            return ring.consumerMark();
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public void consumerMark(long mark) {
        try {
            ring.consumerMark(mark);
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public long peekPosition() {
        try {
            return ring.peekPosition();
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public int peekNextDatatype() {
        try {
            return ring.peekNextDatatype();
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public int peekNextTagWord() {
        try {
            return ring.peekNextTagWord();
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public int peekNextElements() {
        try {
            return ring.peekNextElements();
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public int peekRecord(int datatype, ByteBuffer dst, int offset, int maxElements) {
        try {
            return ring.peekRecord(datatype, dst, offset, maxElements);
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public void commit(long position) {
        try {
            ring.commit(position);
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public void rewindPeek() {
        try {
            ring.rewindPeek();
        } catch (InternalError e) {
            throw fault(e);
        }
    }

    @Override
    public int capacity() {
        return ring.capacity();
    }

    @Override
    public String toString() {
        return ring.toString();
    }
}
