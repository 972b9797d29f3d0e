package org.mpiproxy.mpi.internal;

import java.nio.file.Path;
import java.util.BitSet;

import org.mpiproxy.api.RankChannel;
import org.mpiproxy.mpi.internal.engine.CommFailure;
import org.mpiproxy.mpi.internal.engine.Fabric;
import org.mpiproxy.mpi.internal.engine.Link;
import org.mpiproxy.mpi.internal.engine.RingLink;
import org.mpiproxy.mpi.internal.engine.ShmPairs;
import org.mpiproxy.protocol.MpiErrors;

/**
 * The links of a rank started by a proxy: to rank 0 through its channel (the proxy relays to the
 * host), to the ranks of its node through a ring pair each ({@link ShmPairs}), and to the ranks
 * of other nodes through rank 0, which relays (the envelope names the destination).
 */
public final class RankFabric implements Fabric {

    private final ChannelRankTransport channel;
    private final int self;
    private final int size;
    private final BitSet onNode;
    private final ShmPairs pairs;
    private final RingLink host;
    private final RingLink[] links;
    /** Links polled, in the order they were opened: the host's first. */
    private final RingLink[] polled;
    private int polledCount;
    private boolean everyPeer;
    private boolean closed;

    /**
     * @param channel       the rank's channel to its proxy (not closed here)
     * @param self          this rank
     * @param size          ranks in the world
     * @param onNode        the ranks whose channels are in the same job directory as this one
     * @param pairCapacity  bytes of each ring of a pair this rank creates
     */
    public RankFabric(ChannelRankTransport channel, int self, int size, BitSet onNode, int pairCapacity) {
        RankChannel c = channel.channel();
        Path directory = c.path().toAbsolutePath().getParent();
        this.channel = channel;
        this.self = self;
        this.size = size;
        this.onNode = (BitSet) onNode.clone();
        this.onNode.clear(0);
        this.onNode.clear(self);
        this.pairs = new ShmPairs(directory, c.jobId(), self, pairCapacity);
        this.host = new RingLink(c.fromRank(), c.toRank(), channel::ringProxy, null);
        this.links = new RingLink[size];
        this.polled = new RingLink[size];
        links[0] = host;
        polled[polledCount++] = host;
    }

    @Override
    public Link link(int peer) {
        if (peer == 0 || !onNode.get(peer)) {
            // rank 0, or a rank of another node: through the proxy to rank 0
            return host;
        }
        return open(peer);
    }

    private RingLink open(int peer) {
        RingLink l = links[peer];
        if (l == null) {
            if (closed) {
                throw new CommFailure(MpiErrors.ERR_OTHER, "MPI was finalized");
            }
            l = links[peer] = pairs.open(peer);
            polled[polledCount++] = l;
        }
        return l;
    }

    @Override
    public void listen(int peer) {
        if (peer == EVERY_PEER) {
            if (!everyPeer) {
                everyPeer = true;
                for (int p = onNode.nextSetBit(0); p >= 0; p = onNode.nextSetBit(p + 1)) {
                    open(p);
                }
            }
        } else if (peer != 0 && onNode.get(peer)) {
            open(peer);
        }
    }

    @Override
    public int poll(Link.Sink sink) {
        int n = 0;
        for (int i = 0; i < polledCount; i++) {
            n += polled[i].poll(sink);
        }
        return n;
    }

    @Override
    public void idle(long idleNanos) {
        channel.checkProxy();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (int i = 1; i < polledCount; i++) {
            polled[i].close();
        }
    }
}
