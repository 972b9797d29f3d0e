package org.mpiproxy.mpi.internal;

import java.nio.ByteBuffer;
import java.nio.file.Path;

import org.mpiproxy.api.Doorbell;
import org.mpiproxy.api.MessageRing;
import org.mpiproxy.api.RankChannel;
import org.mpiproxy.channel.shm.BackoffIdler;
import org.mpiproxy.channel.shm.MappedRankChannel;
import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;

/**
 * A rank's side of a job: its shared-memory channel to the proxy, which relays to rank 0.
 * Sends are records offered to the rank-to-host ring, receives poll the host-to-rank ring;
 * both back off while the ring is full or empty. Not thread-safe.
 */
public final class ChannelRankTransport implements TaggedTransport {

    /** Largest record this side writes, in bytes (smaller when the ring is small). */
    public static final int MAX_RECORD_BYTES = 64 * 1024;

    /** Longest sleep on the doorbell: a safety net, a lost doorbell costs at most this. */
    static final long RUNG_WAIT_MILLIS = 250;

    private final RankChannel channel;
    private final MessageRing inbound;
    private final MessageRing outbound;
    private final BackoffIdler idler = new BackoffIdler();
    private final RankDoorbell doorbell = new RankDoorbell();
    private final int maxRecordBytes;
    private final long rungWaitMillis;
    private ProxyLifeline lifeline;
    private boolean closed;
    /** The message {@link #nextMessage} is assembling, kept when it returns before the message is whole. */
    private MessageAssembly assembly;
    private ByteBuffer record;

    /**
     * @param channel the rank's channel; closed by {@link #finish()}
     */
    public ChannelRankTransport(RankChannel channel) {
        this(channel, RUNG_WAIT_MILLIS);
    }

    /**
     * @param channel        the rank's channel; closed by {@link #finish()}
     * @param rungWaitMillis the longest sleep on the doorbell (tests make it long, so that only a
     *                       doorbell ends it)
     */
    ChannelRankTransport(RankChannel channel, long rungWaitMillis) {
        this.channel = channel;
        this.rungWaitMillis = rungWaitMillis;
        this.inbound = channel.toRank();
        this.outbound = channel.fromRank();
        // A quarter of the ring always fits one record with its header, wherever the ring wraps.
        this.maxRecordBytes = Math.max(8, Math.min(MAX_RECORD_BYTES, outbound.capacity() / 4));
        // this side writes the rank-to-host ring and rings the proxy's doorbell after it
        outbound.producerRingsDoorbell(true);
    }

    /**
     * @param file the channel file the proxy created for this rank
     * @return the transport over the mapped file
     * @throws MpiException {@code MPI_ERR_IO} when the file cannot be mapped
     */
    public static ChannelRankTransport map(Path file) {
        try {
            return new ChannelRankTransport(MappedRankChannel.map(file));
        } catch (java.io.IOException | RuntimeException e) {
            throw new MpiException(MpiErrors.ERR_IO, "cannot map channel " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Watches the proxy while this rank waits on a ring.
     *
     * @param proxy the proxy's lifeline, {@code null} for none
     * @return this
     */
    public ChannelRankTransport watch(ProxyLifeline proxy) {
        this.lifeline = proxy;
        return this;
    }

    private void idle() {
        idler.idle(0);
        if (lifeline != null) {
            lifeline.check();
        }
    }

    /**
     * Waits for the proxy to write: once the back-off would sleep a millisecond or more, and the
     * proxy promised to ring, sleeps on the doorbell instead of a timer.
     *
     * @param maxMillis the longest sleep the caller allows
     */
    private void idleForData(long maxMillis) {
        long bell;
        if (!idler.sleepsLongNext() || !inbound.producerRingsDoorbell() || (bell = doorbell.address()) == 0) {
            idle();
            return;
        }
        try {
            if (!Doorbell.arm(inbound, bell)) {
                doorbell.await(Math.max(1, Math.min(rungWaitMillis, maxMillis)));
            }
        } finally {
            inbound.doorbell(0);
        }
        if (lifeline != null) {
            lifeline.check();
        }
    }

    /** @return the rank's channel to its proxy */
    public RankChannel channel() {
        return channel;
    }

    /**
     * Checks that the proxy still runs.
     *
     * @throws MpiException when it is gone (the lifeline ends the process)
     */
    public void checkProxy() {
        if (lifeline != null) {
            lifeline.check();
        }
    }

    /** After records were written: wakes the proxy if it sleeps on its doorbell. */
    public void ringProxy() {
        long bell = Doorbell.take(outbound);
        if (bell != 0) {
            doorbell.ring(bell);
        }
    }

    @Override
    public void send(int datatype, ByteBuffer src, int offset, int count, int dest) {
        int size = MpiDatatype.sizeOf(datatype);
        int perRecord = Math.max(1, maxRecordBytes / size);
        for (int done = 0; done < count; ) {
            int k = Math.min(perRecord, count - done);
            while (!outbound.offer(datatype, k, src, offset + done * size, k * size)) {
                idle();
            }
            idler.reset();
            ringProxy();
            done += k;
        }
    }

    @Override
    public void recv(int datatype, ByteBuffer dst, int offset, int count, int source) {
        int size = MpiDatatype.sizeOf(datatype);
        int got = 0;
        while (got < count) {
            int n = inbound.poll(datatype, dst, offset + got * size, count - got);
            if (n == MessageRing.TYPE_MISMATCH) {
                MpiDatatype sent = MpiDatatype.ofCode(inbound.peekDatatype());
                throw new MpiException(MpiErrors.ERR_TYPE, "rank 0 sent " + (sent == null ? "unknown" : "MPI_" + sent)
                        + " elements, expected MPI_" + MpiDatatype.ofCode(datatype));
            }
            if (n == 0) {
                idleForData(rungWaitMillis);
            } else {
                idler.reset();
                got += n;
            }
        }
    }

    @Override
    public void send(int datatype, int tag, ByteBuffer src, int offset, int count, int dest) {
        int size = MpiDatatype.sizeOf(datatype);
        int perRecord = Math.max(1, maxRecordBytes / size);
        for (int done = 0; done < count; ) {
            int k = Math.min(perRecord, count - done);
            int tagWord = done + k < count ? tag | MessageRing.MORE_RECORDS : tag;
            while (!outbound.offer(datatype, k, tagWord, src, offset + done * size, k * size)) {
                idle();
            }
            idler.reset();
            ringProxy();
            done += k;
        }
    }

    @Override
    public TaggedMessage nextMessage(int source, long waitNanos) {
        long start = System.nanoTime();
        while (true) {
            if (inbound.isEmpty()) {
                long left = waitNanos - (System.nanoTime() - start);
                if (left <= 0) {
                    return null;
                }
                idleForData(java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(left));
                continue;
            }
            idler.reset();
            int datatype = inbound.peekDatatype();
            int tagWord = inbound.peekTagWord();
            int elements = inbound.headRecordElements();
            int size = MpiDatatype.sizeOf(datatype);
            if (size <= 0) {
                throw new MpiException(MpiErrors.ERR_TYPE, "rank 0 sent elements of unknown datatype " + datatype);
            }
            if (record == null || record.capacity() < elements * size) {
                record = ByteBuffer.allocate(Math.max(elements * size, 4096)).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            }
            int n = inbound.pollRecord(datatype, record, 0, elements);
            if (assembly == null) {
                assembly = new MessageAssembly(datatype, tagWord & ~MessageRing.MORE_RECORDS);
            }
            assembly.append(datatype, record, 0, n * size);
            if (n == elements && (tagWord & MessageRing.MORE_RECORDS) == 0) {
                TaggedMessage m = assembly.message(source);
                assembly = null;
                return m;
            }
        }
    }

    @Override
    public int[] sources() {
        return new int[] {0};
    }

    @Override
    public TaggedMessage takePartial(int source) {
        MessageAssembly a = assembly;
        assembly = null;
        return a == null ? null : a.message(source);
    }

    @Override
    public int[] finish() {
        if (!closed) {
            closed = true;
            doorbell.close();
            channel.close();
        }
        return new int[0];
    }
}
