package org.mpiproxy.proxy.internal;

import static org.mpiproxy.api.DatagramHandler.DO_NOT_SLEEP;
import static org.mpiproxy.api.DatagramHandler.SLEEP_AS_USUAL;
import static org.mpiproxy.api.DatagramHandler.SLEEP_UNTIL_RUNG;
import static org.mpiproxy.protocol.V1HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V1HeaderDescriptor.MAX_PAYLOAD_LENGTH;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_RECV;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Map;
import java.util.function.LongSupplier;

import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.Doorbell;
import org.mpiproxy.api.MessageRing;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V1HeaderFlyweight;
import org.slf4j.Logger;

/**
 * The v1 data path: SEND straight from the receive buffer into the rank's {@code toRank} ring
 * (held in order while the ring is full, up to the hold limit), RECV queued and answered from the
 * {@code fromRank} ring as data arrives, and the ranks that still have held SENDs or queued RECVs
 * ({@link #pump}, {@link #armDoorbells}). Receive thread only (the dispatcher's lock).
 */
final class V1DataPath {

    /** Result of a RECV answered without data because the rank ended before writing it all. */
    static final int RECV_RANK_ENDED = MpiErrors.ERR_TRUNCATE;

    private final Logger log;
    /** The live jobs by their host's address; kept by {@link V1RankRequests}, read here. */
    private final Map<InetSocketAddress, Job> jobs;
    private final V1Replies replies;
    private final ProxyCounters<ProxyCounter> counters;
    private final RateLimitedLog<ProxyCounter> lines;
    private final LongSupplier holdLimitBytes;
    private final LongSupplier clock;
    private final ArrayList<Rank> active = new ArrayList<>();
    private final RankFailure failed;

    /** Told when moving a rank's data in {@link #pump} threw; the rank then has no pending work. */
    @FunctionalInterface
    interface RankFailure {
        void failed(Rank rank, DatagramTransport transport, RuntimeException failure);
    }

    /**
     * @param jobs           the live jobs by their host's address ({@link V1RankRequests} keeps them)
     * @param holdLimitBytes the most SEND bytes held for one rank whose ring is full
     * @param clock          the clock a host's silence is measured in ({@link JobSupervisor#now})
     * @param failed         told of a rank whose data could not be moved ({@link V1RequestFailures#rankFailed})
     */
    V1DataPath(Logger log, Map<InetSocketAddress, Job> jobs, V1Replies replies, ProxyCounters<ProxyCounter> counters,
               RateLimitedLog<ProxyCounter> lines, LongSupplier holdLimitBytes, LongSupplier clock,
               RankFailure failed) {
        this.failed = failed;
        this.log = log;
        this.jobs = jobs;
        this.replies = replies;
        this.counters = counters;
        this.lines = lines;
        this.holdLimitBytes = holdLimitBytes;
        this.clock = clock;
    }

    void onSend(V1HeaderFlyweight header, int length, InetSocketAddress source, DatagramTransport transport) {
        int datatype = header.datatype();
        int size = v1Size(datatype);
        if (size < 0) {
            invalid(ProxyCounter.INVALID_DATATYPE, source, length, datatype);
            return;
        }
        long count = header.datacount();
        long bytes = count * size;
        if (bytes > length - HEADER_LENGTH) {
            invalid(ProxyCounter.INVALID_COUNT, source, length, count);
            return;
        }
        Rank rank = rankOf(source, header.rankId());
        if (rank == null) {
            invalid(ProxyCounter.INVALID_RANK, source, length, header.rankId());
            return;
        }
        counters.increment(ProxyCounter.SEND_DATAGRAMS);
        if (count == 0) {
            return;
        }
        if (rank.isDone()) {
            dropSend(rank);
            return;
        }
        ByteBuffer buffer = header.buffer();
        int payloadOffset = header.payloadOffset();
        int n = (int) bytes;
        // Straight from the receive buffer into the ring, unless held data must go first (order).
        if (rank.held.isEmpty() && rank.toRank.offer(datatype, (int) count, buffer, payloadOffset, n)) {
            rank.bytesIn += n;
            counters.add(ProxyCounter.SEND_BYTES, n);
            ringRank(rank, transport);
            return;
        }
        if (rank.held.add(datatype, (int) count, buffer, payloadOffset, n, holdLimitBytes.getAsLong())) {
            counters.increment(ProxyCounter.SEND_HELD);
            activate(rank);
        } else {
            dropSend(rank);
            if (lines.permit(ProxyCounter.SEND_DROPPED)) {
                log.warn("dropped SEND from {} to rank {}: {} bytes held already, the hold limit ({}; {} similar"
                        + " lines suppressed)", Job.ownerText(source), rank.rankId, rank.held.heldBytes(),
                        ProxyCounter.SEND_DROPPED.key(), lines.takeSuppressed(ProxyCounter.SEND_DROPPED));
            }
        }
    }

    private void dropSend(Rank rank) {
        rank.dropped++;
        counters.increment(ProxyCounter.SEND_DROPPED);
    }

    void onRecv(V1HeaderFlyweight header, InetSocketAddress source, DatagramTransport transport) {
        int datatype = header.datatype();
        if (v1Size(datatype) < 0) {
            invalid(ProxyCounter.INVALID_DATATYPE, source, HEADER_LENGTH, datatype);
            return;
        }
        Rank rank = rankOf(source, header.rankId());
        if (rank == null) {
            invalid(ProxyCounter.INVALID_RANK, source, HEADER_LENGTH, header.rankId());
            return;
        }
        counters.increment(ProxyCounter.RECV_REQUESTS);
        long count = header.datacount();
        if (count == 0) {
            return;
        }
        if (!rank.recvs.offer(datatype, count)) {
            counters.increment(ProxyCounter.RECV_DROPPED);
            if (lines.permit(ProxyCounter.RECV_DROPPED)) {
                log.warn("dropped RECV from {} for rank {}: {} requests pending already ({}; {} similar lines"
                        + " suppressed)", Job.ownerText(source), rank.rankId, Rank.MAX_PENDING_RECVS,
                        ProxyCounter.RECV_DROPPED.key(), lines.takeSuppressed(ProxyCounter.RECV_DROPPED));
            }
            return;
        }
        serve(rank, transport);
        if (rank.hasPendingWork()) {
            activate(rank);
        }
    }

    /**
     * Moves held SENDs into the rings and answers queued RECVs of every rank that has some.
     *
     * @return the records moved and datagrams sent
     */
    int pump(DatagramTransport transport) {
        int work = 0;
        for (int i = 0; i < active.size();) {
            Rank rank = active.get(i);
            if (!rank.removed) {
                try {
                    int moved = flushHeld(rank);
                    if (moved > 0) {
                        ringRank(rank, transport);
                    }
                    work += moved;
                    work += serve(rank, transport);
                } catch (RuntimeException e) {
                    dropHeld(rank);
                    failed.failed(rank, transport, e);
                    work++;
                }
            }
            if (rank.removed || !rank.hasPendingWork()) {
                rank.active = false;
                int last = active.size() - 1;
                active.set(i, active.get(last));
                active.remove(last);
            } else {
                i++;
            }
        }
        return work;
    }

    boolean hasActive() {
        return !active.isEmpty();
    }

    void activate(Rank rank) {
        if (!rank.active) {
            rank.active = true;
            active.add(rank);
        }
    }

    void clear() {
        active.clear();
    }

    private void ringRank(Rank rank, DatagramTransport transport) {
        if (RankDoorbells.ringIfArmed(rank.toRank, transport)) {
            counters.increment(ProxyCounter.DOORBELLS_RUNG);
        }
    }

    /**
     * Before the receive thread sleeps: the ranks whose RECVs wait for data get its doorbell.
     * Held SENDs wait for room, which no doorbell announces: then the usual sleep.
     *
     * @return how the receive thread may sleep ({@link org.mpiproxy.api.DatagramHandler#armDoorbells})
     */
    int armDoorbells(long doorbell) {
        int result = doorbell == 0 ? SLEEP_AS_USUAL : SLEEP_UNTIL_RUNG;
        for (Rank rank : active) {
            if (rank.removed) {
                continue;
            }
            if (!rank.held.isEmpty()) {
                result = Math.min(result, SLEEP_AS_USUAL);
            }
            if (!rank.recvs.isEmpty()) {
                if (rank.fromRank == null || rank.isDone()) {
                    return DO_NOT_SLEEP;
                }
                if (doorbell != 0 && Doorbell.arm(rank.fromRank, doorbell)) {
                    return DO_NOT_SLEEP;
                }
                if (!rank.fromRank.producerRingsDoorbell()) {
                    // a rank library without doorbells: wake on the timer as before
                    result = Math.min(result, SLEEP_AS_USUAL);
                }
            }
        }
        return result;
    }

    private int flushHeld(Rank rank) {
        HeldSends held = rank.held;
        int moved = 0;
        while (!held.isEmpty()) {
            int length = held.headLength();
            if (!rank.toRank.offer(held.headDatatype(), held.headCount(), held.buffer(), held.headPayloadOffset(),
                    length)) {
                break;
            }
            held.pop();
            rank.bytesIn += length;
            counters.add(ProxyCounter.SEND_BYTES, length);
            moved++;
        }
        return moved;
    }

    /** Answers the rank's pending RECVs as far as its ring allows; returns datagrams sent. */
    int serve(Rank rank, DatagramTransport transport) {
        PendingRecvQueue recvs = rank.recvs;
        // a ring that faulted is not read again: its RECVs end as the rank's do
        MessageRing ring = rank.fault == null ? rank.fromRank : null;
        int sent = 0;
        while (!recvs.isEmpty()) {
            int datatype = recvs.headDatatype();
            if (ring == null) {
                abandonHeadRecv(transport, rank, datatype);
                sent++;
                continue;
            }
            int head = ring.peekDatatype();
            if (head == MessageRing.EMPTY) {
                if (!rank.isDone()) {
                    break;
                }
                abandonHeadRecv(transport, rank, datatype);
                sent++;
                continue;
            }
            if (head != datatype) {
                typeMismatch(transport, rank, datatype);
                sent++;
                continue;
            }
            int size = MpiDatatype.sizeOf(datatype);
            int want = (int) Math.min(recvs.headRemaining(), MAX_PAYLOAD_LENGTH / size);
            // No dribbling: wait for a full datagram or the rest of the request, unless the rank
            // has ended and nothing more will come.
            if (!rank.isDone() && ring.availableElements(datatype, want) < want) {
                break;
            }
            int n = ring.poll(datatype, replies.buffer(), HEADER_LENGTH, want);
            if (n == MessageRing.TYPE_MISMATCH) {
                typeMismatch(transport, rank, datatype);
                sent++;
                continue;
            }
            if (n <= 0) {
                break;
            }
            int bytes = n * size;
            replies.set(OP_RECV, MpiErrors.SUCCESS, rank.rankId, rank.coreId, datatype, n);
            replies.send(transport, HEADER_LENGTH + bytes, rank.job.owner);
            rank.bytesOut += bytes;
            counters.increment(ProxyCounter.RECV_REPLIES);
            counters.add(ProxyCounter.RECV_BYTES, bytes);
            recvs.consume(n);
            sent++;
        }
        return sent;
    }

    /** Answers what the rank's ring still holds, then every RECV left with {@link #RECV_RANK_ENDED}. */
    void serveToTheEnd(Rank rank, DatagramTransport transport) {
        serve(rank, transport);
        while (!rank.recvs.isEmpty()) {
            abandonHeadRecv(transport, rank, rank.recvs.headDatatype());
        }
    }

    /** Drops what an ended rank's host sent that never reached its ring (counted as dropped). */
    void dropHeld(Rank rank) {
        if (!rank.held.isEmpty()) {
            rank.dropped += rank.held.records();
            counters.add(ProxyCounter.SEND_DROPPED, rank.held.records());
            rank.held.clear();
        }
    }

    private void typeMismatch(DatagramTransport transport, Rank rank, int datatype) {
        counters.increment(ProxyCounter.RECV_TYPE_MISMATCH);
        replies.set(OP_RECV, MpiErrors.ERR_TYPE, rank.rankId, rank.coreId, datatype, 0);
        replies.send(transport, HEADER_LENGTH, rank.job.owner);
        rank.recvs.pop();
    }

    private void abandonHeadRecv(DatagramTransport transport, Rank rank, int datatype) {
        counters.increment(ProxyCounter.RECV_ABANDONED);
        replies.set(OP_RECV, RECV_RANK_ENDED, rank.rankId, rank.coreId, datatype, 0);
        replies.send(transport, HEADER_LENGTH, rank.job.owner);
        rank.recvs.pop();
    }

    /** Counts a datagram that is dropped, and logs it (rate-limited). */
    void invalid(ProxyCounter reason, InetSocketAddress source, int length, long value) {
        counters.increment(reason);
        if (lines.permit(reason)) {
            log.warn("dropped a {}-byte datagram from {}: {} (value {}; {} similar lines suppressed)", length,
                    Job.ownerText(source), reason.key(), value, lines.takeSuppressed(reason));
        }
    }

    /** @return the rank a datagram names, as {@link #rankOf}, without counting its host as heard */
    Rank peekRank(InetSocketAddress source, int rankId) {
        Job job = jobs.get(source);
        return job != null ? job.rank(rankId) : null;
    }

    /** @return the rank a datagram names: the job of its source address, the rank id in its header */
    Rank rankOf(InetSocketAddress source, int rankId) {
        Job job = jobs.get(source);
        if (job == null) {
            return null;
        }
        JobSupervisor.onHostHeard(job, clock.getAsLong());
        return job.rank(rankId);
    }

    private static int v1Size(int datatype) {
        return datatype <= MpiDatatype.V1_MAX_CODE ? MpiDatatype.sizeOf(datatype) : -1;
    }
}
