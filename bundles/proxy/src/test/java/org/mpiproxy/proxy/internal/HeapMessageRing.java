package org.mpiproxy.proxy.internal;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Iterator;

import org.mpiproxy.api.MessageRing;
import org.mpiproxy.protocol.MpiDatatype;

/** A heap stand-in for the shared-memory ring with the same record semantics; capacity counts payload bytes. Synchronized, so a test thread may act as the rank. */
final class HeapMessageRing implements MessageRing {

    private static final class Rec {
        final int datatype;
        final int size;
        final byte[] data;
        int consumed;
        int tagWord;

        Rec(int datatype, byte[] data) {
            this.datatype = datatype;
            this.size = MpiDatatype.sizeOf(datatype);
            this.data = data;
        }

        int remainingElements() {
            return (data.length - consumed) / size;
        }
    }

    private final ArrayDeque<Rec> records = new ArrayDeque<>();
    private final int capacity;
    private int used;
    private long written;
    private long read;
    int offers;

    HeapMessageRing(int capacity) {
        this.capacity = capacity;
    }

    private long producerMark;
    private long consumerMark;

    @Override
    public synchronized boolean offer(int datatype, int count, int tagWord, ByteBuffer src, int offset, int length) {
        if (!offer(datatype, count, src, offset, length)) {
            return false;
        }
        records.peekLast().tagWord = tagWord;
        return true;
    }

    @Override
    public synchronized int peekTagWord() {
        Rec head = records.peek();
        return head == null ? 0 : head.tagWord;
    }

    @Override
    public synchronized int headRecordElements() {
        Rec head = records.peek();
        return head == null ? 0 : head.remainingElements();
    }

    @Override
    public synchronized int pollRecord(int datatype, ByteBuffer dst, int offset, int maxElements) {
        Rec head = records.peek();
        if (head == null) {
            return 0;
        }
        return poll(datatype, dst, offset, Math.min(maxElements, head.remainingElements()));
    }

    @Override
    public synchronized long producerMark() {
        return producerMark;
    }

    @Override
    public synchronized void producerMark(long mark) {
        producerMark = mark;
    }

    @Override
    public synchronized long consumerMark() {
        return consumerMark;
    }

    @Override
    public synchronized void consumerMark(long mark) {
        consumerMark = mark;
    }

    /** Read-ahead cursor in payload bytes ever read (as {@code read}); -1 until used. */
    private long peekPos = -1;

    private long syncPeek() {
        if (peekPos < read) {
            peekPos = read;
        }
        return peekPos;
    }

    /** @return the record at the cursor and sets {@link #peekIn} to the bytes of it already peeked, or null */
    private Rec peekRec() {
        long at = syncPeek();
        long start = read - (records.isEmpty() ? 0 : records.peek().consumed);
        for (Rec r : records) {
            if (at < start + r.data.length) {
                peekIn = (int) (at - start);
                return r;
            }
            start += r.data.length;
        }
        return null;
    }

    private int peekIn;

    @Override
    public synchronized long peekPosition() {
        return syncPeek();
    }

    @Override
    public synchronized int peekNextDatatype() {
        Rec r = peekRec();
        return r == null ? EMPTY : r.datatype;
    }

    @Override
    public synchronized int peekNextTagWord() {
        Rec r = peekRec();
        return r == null ? 0 : r.tagWord;
    }

    @Override
    public synchronized int peekNextElements() {
        Rec r = peekRec();
        return r == null ? 0 : (r.data.length - peekIn) / r.size;
    }

    @Override
    public synchronized int peekRecord(int datatype, ByteBuffer dst, int offset, int maxElements) {
        Rec r = peekRec();
        if (r == null) {
            return 0;
        }
        if (r.datatype != datatype) {
            return TYPE_MISMATCH;
        }
        int n = Math.min(maxElements, (r.data.length - peekIn) / r.size);
        dst.put(offset, r.data, peekIn, n * r.size);
        peekPos += (long) n * r.size;
        return n;
    }

    @Override
    public synchronized void commit(long position) {
        if (position < read || position > syncPeek()) {
            throw new IllegalArgumentException("commit " + position + " outside " + read + ".." + peekPos);
        }
        while (read < position) {
            Rec head = records.peek();
            int bytes = (int) Math.min(position - read, head.data.length - head.consumed);
            head.consumed += bytes;
            used -= bytes;
            read += bytes;
            if (head.consumed == head.data.length) {
                records.poll();
            }
        }
    }

    @Override
    public synchronized void rewindPeek() {
        peekPos = -1;
    }

    /** @return the tag words of the records waiting, oldest first */
    synchronized java.util.List<Integer> tagWords() {
        java.util.List<Integer> list = new java.util.ArrayList<>();
        for (Rec r : records) {
            list.add(r.tagWord);
        }
        return list;
    }

    /** What the next offers throw, as a ring whose shared memory failed does; {@code null}: none. */
    volatile Throwable offerFault;

    @Override
    public synchronized boolean offer(int datatype, int count, ByteBuffer src, int offset, int length) {
        offers++;
        Throwable fault = offerFault;
        if (fault instanceof RuntimeException e) {
            throw e;
        }
        if (fault instanceof Error e) {
            throw e;
        }
        int size = MpiDatatype.sizeOf(datatype);
        if (count < 1 || size < 0 || (long) count * size != length || length > capacity) {
            throw new IllegalArgumentException("datatype=" + datatype + " count=" + count + " length=" + length);
        }
        if (used + length > capacity) {
            return false;
        }
        byte[] data = new byte[length];
        src.get(offset, data);
        records.add(new Rec(datatype, data));
        used += length;
        written += length;
        return true;
    }

    @Override
    public synchronized int poll(int datatype, ByteBuffer dst, int offset, int maxElements) {
        Rec head = records.peek();
        if (head == null) {
            return 0;
        }
        if (head.datatype != datatype) {
            return TYPE_MISMATCH;
        }
        int taken = 0;
        int at = offset;
        while (taken < maxElements && (head = records.peek()) != null && head.datatype == datatype) {
            int n = Math.min(maxElements - taken, head.remainingElements());
            int bytes = n * head.size;
            dst.put(at, head.data, head.consumed, bytes);
            head.consumed += bytes;
            at += bytes;
            taken += n;
            used -= bytes;
            read += bytes;
            if (head.remainingElements() == 0) {
                records.poll();
            }
        }
        return taken;
    }

    @Override
    public synchronized int peekDatatype() {
        Rec head = records.peek();
        return head == null ? EMPTY : head.datatype;
    }

    @Override
    public synchronized long availableElements(int datatype) {
        long n = 0;
        for (Iterator<Rec> it = records.iterator(); it.hasNext();) {
            Rec r = it.next();
            if (r.datatype != datatype) {
                break;
            }
            n += r.remainingElements();
        }
        return n;
    }

    @Override
    public synchronized boolean isEmpty() {
        return records.isEmpty();
    }

    @Override
    public synchronized int capacity() {
        return capacity;
    }

    @Override
    public synchronized int freeBytes() {
        return capacity - used;
    }

    @Override
    public synchronized long bytesWritten() {
        return written;
    }

    @Override
    public synchronized long bytesRead() {
        return read;
    }

    /** Writes ints as one record, as a rank would. */
    boolean offerInts(int... values) {
        ByteBuffer b = ByteBuffer.allocate(values.length * 4).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (int v : values) {
            b.putInt(v);
        }
        return offer(MpiDatatype.INT.code(), values.length, b, 0, values.length * 4);
    }

    /** Reads up to {@code max} ints, as a rank would. */
    int[] pollInts(int max) {
        ByteBuffer b = ByteBuffer.allocate(max * 4).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        int n = poll(MpiDatatype.INT.code(), b, 0, max);
        int[] out = new int[Math.max(n, 0)];
        for (int i = 0; i < out.length; i++) {
            out[i] = b.getInt(i * 4);
        }
        return out;
    }

    private long doorbell;
    private boolean producerRings;

    @Override
    public synchronized long doorbell() {
        return doorbell;
    }

    @Override
    public synchronized void doorbell(long encoded) {
        doorbell = encoded;
    }

    @Override
    public synchronized boolean takeDoorbell(long encoded) {
        if (encoded == 0 || doorbell != encoded) {
            return false;
        }
        doorbell = 0;
        return true;
    }

    @Override
    public synchronized boolean producerRingsDoorbell() {
        return producerRings;
    }

    @Override
    public synchronized void producerRingsDoorbell(boolean rings) {
        producerRings = rings;
    }
}
