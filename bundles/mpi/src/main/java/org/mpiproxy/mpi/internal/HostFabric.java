package org.mpiproxy.mpi.internal;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.mpiproxy.mpi.internal.engine.CommFailure;
import org.mpiproxy.mpi.internal.engine.Envelope;
import org.mpiproxy.mpi.internal.engine.Fabric;
import org.mpiproxy.mpi.internal.engine.Link;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;

/**
 * The links of rank 0, the host: protocol v2 to every rank's proxy. A message from one rank to a
 * rank of another node comes here and is sent on (its envelope names the destination), as long as
 * ranks of different nodes have no path of their own.
 */
public final class HostFabric implements Fabric {

    private static final int BYTE = MpiDatatype.BYTE.code();
    /** Tag of every message of the engine on the wire: the envelope carries the program's tag. */
    static final int WIRE_TAG = 0;

    private final V2HostTransport transport;
    private final Link[] links;
    private Link.Sink sink;
    private final java.util.function.Consumer<TaggedMessage> arrivals = this::arrived;
    private long relayed;

    /**
     * @param transport the v2 host transport of the job (not closed here)
     */
    public HostFabric(V2HostTransport transport) {
        this.transport = transport;
        this.links = new Link[transport.size()];
    }

    @Override
    public Link link(int peer) {
        Link l = links[peer];
        if (l == null) {
            l = links[peer] = new Link() {
                @Override
                public boolean offer(ByteBuffer message) {
                    transport.send(BYTE, WIRE_TAG, message, message.position(), message.remaining(), peer);
                    message.position(message.limit());
                    return true;
                }

                @Override
                public int poll(Sink s) {
                    return 0;
                }

                @Override
                public void close() {
                }
            };
        }
        return l;
    }

    @Override
    public void listen(int peer) {
        // every rank's stream is polled by pollMessages
    }

    @Override
    public int poll(Link.Sink to) {
        this.sink = to;
        return transport.pollMessages(0, arrivals);
    }

    private void arrived(TaggedMessage m) {
        ByteBuffer data = m.data();
        if (m.datatype() != BYTE || data.remaining() < Envelope.LENGTH) {
            throw new CommFailure(MpiErrors.ERR_INTERN, "rank " + m.source() + " sent a message that is not one of"
                    + " the mpi package (" + data.remaining() + " elements of datatype " + m.datatype() + ")");
        }
        ByteBuffer message = data.slice().order(ByteOrder.LITTLE_ENDIAN);
        int dest = Envelope.destination(message);
        if (dest != 0) {
            if (dest < 0 || dest >= links.length) {
                throw new CommFailure(MpiErrors.ERR_INTERN, "rank " + m.source() + " sent a message for rank " + dest);
            }
            relayed++;
            transport.send(BYTE, WIRE_TAG, message, 0, message.remaining(), dest);
            return;
        }
        sink.accept(message, message.remaining());
    }

    /** @return messages sent on between ranks of different nodes */
    public long relayed() {
        return relayed;
    }

    @Override
    public void idle(long idleNanos) {
        transport.checkNodes(0);
    }

    /** Checks the nodes, and fails the wait when {@code awaited} refused a message sent to it (any rank: every one). */
    @Override
    public void idle(long idleNanos, int awaited) {
        transport.checkNodes(awaited);
    }

    @Override
    public void close() {
    }
}
