package org.mpiproxy.api;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Receives every datagram that arrives at the {@link DatagramTransport}, and does the work that
 * waits for something other than a datagram (data a rank has not written yet, a full ring).
 * <p>
 * The transport's receive thread is the handler's duty cycle: it calls {@link #onDatagram} for
 * each datagram, then {@link #doWork}; when neither did anything it backs off (spin, yield,
 * park) while {@link #hasPendingWork()} is {@code true}, and blocks until the next datagram or
 * {@link DatagramTransport#wakeup()} otherwise. Every method is called on that thread only and
 * must not block. The buffer is reused for the next datagram: copy what must outlive the call.
 */
@ConsumerType
public interface DatagramHandler {

    /**
     * @param datagram the datagram, between position and limit; byte order little-endian
     * @param source   the sender
     * @param replies  the transport to answer through
     */
    void onDatagram(ByteBuffer datagram, InetSocketAddress source, DatagramTransport replies);

    /**
     * Does pending work: answers requests whose data has arrived, moves held data into rings
     * that have room, finishes what other threads completed.
     *
     * @param replies the transport to answer through
     * @return how many items of work were done; 0 when nothing could progress
     */
    int doWork(DatagramTransport replies);

    /**
     * @return {@code true} while some work waits on shared memory rather than on a datagram or
     *         a wakeup, so the receive thread must keep polling (with back-off)
     */
    boolean hasPendingWork();

    /** {@link #armDoorbells}: new work is there; do not sleep. */
    int DO_NOT_SLEEP = -1;

    /** {@link #armDoorbells}: some pending work is not covered by a doorbell; sleep as usual. */
    int SLEEP_AS_USUAL = 0;

    /** {@link #armDoorbells}: every pending wait rings the doorbell; the caller may sleep long. */
    int SLEEP_UNTIL_RUNG = 1;

    /**
     * Called by the receive thread before a long sleep while {@link #hasPendingWork()}: the
     * handler announces {@code doorbell} to the rings it waits on (a datagram to it wakes the
     * receive thread) and checks them once more.
     *
     * @param doorbell the transport's own address, encoded ({@link Doorbell#encode}), 0 when it has none
     * @param replies  the transport
     * @return {@link #DO_NOT_SLEEP}, {@link #SLEEP_AS_USUAL} or {@link #SLEEP_UNTIL_RUNG}
     */
    default int armDoorbells(long doorbell, DatagramTransport replies) {
        return SLEEP_AS_USUAL;
    }
}
