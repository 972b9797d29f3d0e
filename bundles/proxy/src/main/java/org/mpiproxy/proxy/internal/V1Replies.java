package org.mpiproxy.proxy.internal;

import static org.mpiproxy.protocol.V1HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V1HeaderDescriptor.MAX_DATAGRAM_LENGTH;
import static org.mpiproxy.protocol.V1HeaderDescriptor.MAX_PAYLOAD_LENGTH;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.protocol.V1HeaderFlyweight;

/**
 * What the v1 proxy sends back: one reply buffer whose header is set through {@link #set} and
 * whose payload (a RECV's elements, polled straight from a ring, or a refusal's reason) follows
 * the header. Receive thread only (the dispatcher's lock).
 */
final class V1Replies {

    private final ByteBuffer buffer = ByteBuffer.allocateDirect(MAX_DATAGRAM_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
    private final V1HeaderFlyweight reply = new V1HeaderFlyweight();
    private final ProxyCounters<ProxyCounter> counters;

    V1Replies(ProxyCounters<ProxyCounter> counters) {
        this.counters = counters;
        reply.wrap(buffer, 0);
    }

    /** @return the reply buffer; a payload goes at {@link org.mpiproxy.protocol.V1HeaderDescriptor#HEADER_LENGTH} */
    ByteBuffer buffer() {
        return buffer;
    }

    /** Sets the reply header (the fields of {@link V1HeaderFlyweight#set}). */
    void set(int operation, int result, int rankId, int coreId, int typeOrCount, long datacount) {
        reply.set(operation, result, rankId, coreId, typeOrCount, datacount);
    }

    /** Writes the reason after the header; @return its length in bytes */
    int putReason(String reason) {
        return ReasonText.put(buffer, HEADER_LENGTH, reason, MAX_PAYLOAD_LENGTH);
    }

    /** Sends the first {@code length} bytes of the buffer; nothing when {@code replies} is null. */
    void send(DatagramTransport replies, int length, InetSocketAddress target) {
        if (replies == null) {
            return;
        }
        buffer.limit(length).position(0);
        if (!replies.send(buffer, target)) {
            counters.increment(ProxyCounter.REPLIES_FAILED);
        }
        buffer.clear();
    }
}
