package org.mpiproxy.proxy.internal;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.mpiproxy.api.DatagramHandler;
import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.Doorbell;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.protocol.V2HeaderDescriptor;

/**
 * Routes each datagram by its first byte: {@link V2HeaderDescriptor#MAGIC} to v2, anything else
 * to v1. A disabled protocol's datagrams are dropped and counted. Receive thread, except
 * {@link #jobs()}, {@link #counters()} and {@link #v1Enabled(boolean)}.
 */
final class ProtocolFront implements DatagramHandler {

    private final V1Dispatcher v1;
    private volatile V2Dispatcher v2;
    private volatile boolean v1Enabled;
    private volatile boolean v2Enabled = true;
    private volatile long v1Disabled;
    private volatile long v2Disabled;
    private volatile long doorbellsHeard;

    /**
     * @param v1        the v1 dispatcher
     * @param v1Enabled whether v1 datagrams are served
     * @param v2        the v2 dispatcher, {@code null} when v2 is disabled
     */
    ProtocolFront(V1Dispatcher v1, boolean v1Enabled, V2Dispatcher v2) {
        this.v1 = v1;
        this.v1Enabled = v1Enabled;
        this.v2 = v2;
    }

    void v1Enabled(boolean enabled) {
        this.v1Enabled = enabled;
    }

    void v2Enabled(boolean enabled) {
        this.v2Enabled = enabled;
    }

    V2Dispatcher v2() {
        return v2;
    }

    /**
     * Starts serving v2 with a dispatcher made after start-up (v2 could not start then, or was
     * disabled); any thread.
     *
     * @param started the new dispatcher
     * @throws IllegalStateException when a v2 dispatcher is already there
     */
    void startV2(V2Dispatcher started) {
        if (v2 != null) {
            throw new IllegalStateException("v2 is already served");
        }
        v2 = started;
    }

    @Override
    public void onDatagram(ByteBuffer datagram, InetSocketAddress source, DatagramTransport replies) {
        if (Doorbell.isDoorbell(datagram)) {
            // a rank woke the receive thread: the work loop that follows reads its ring
            doorbellsHeard++;
            return;
        }
        boolean isV2 = datagram.hasRemaining()
                && (datagram.get(datagram.position()) & 0xff) == V2HeaderDescriptor.MAGIC;
        if (isV2) {
            V2Dispatcher d = v2;
            if (d != null && v2Enabled) {
                d.onDatagram(datagram, source, replies);
            } else {
                v2Disabled++;
            }
        } else if (v1Enabled) {
            v1.onDatagram(datagram, source, replies);
        } else {
            v1Disabled++;
        }
    }

    @Override
    public int doWork(DatagramTransport replies) {
        int work = v1.doWork(replies);
        V2Dispatcher d = v2;
        if (d != null) {
            work += d.doWork(replies);
        }
        return work;
    }

    @Override
    public boolean hasPendingWork() {
        V2Dispatcher d = v2;
        return v1.hasPendingWork() || (d != null && d.hasPendingWork());
    }

    @Override
    public int armDoorbells(long doorbell, DatagramTransport replies) {
        int result = v1.hasPendingWork() ? v1.armDoorbells(doorbell, replies) : SLEEP_AS_USUAL;
        V2Dispatcher d = v2;
        // v2's pending work (windows, pulls, output, timers) is not announced by doorbells yet
        return d != null && d.hasPendingWork() ? Math.min(result, SLEEP_AS_USUAL) : result;
    }

    List<JobInfo> jobs() {
        List<JobInfo> all = new ArrayList<>(v1.jobs());
        V2Dispatcher d = v2;
        if (d != null) {
            all.addAll(d.jobs());
        }
        return all;
    }

    Map<String, Long> counters() {
        Map<String, Long> all = new LinkedHashMap<>(v1.counters());
        all.put("v1.disabled", v1Disabled);
        all.put("v2.disabled", v2Disabled);
        all.put("doorbells.heard", doorbellsHeard);
        V2Dispatcher d = v2;
        if (d != null) {
            all.putAll(d.counters());
        }
        return all;
    }

    /**
     * Hands both protocols' jobs over: v2 stops handling datagrams, v1 hands its jobs over once the
     * launches under way (shared by both) ended ({@link V1Dispatcher#handOver()}), then v2 does
     * ({@link V2Dispatcher#handOver()}).
     *
     * @return v1's state, with v2's under {@code v2}, for the next revision of the proxy
     */
    Map<String, Object> handOver() {
        V2Dispatcher d = v2;
        if (d != null) {
            d.closeRelay();
        }
        Map<String, Object> state = v1.handOver();
        if (d != null) {
            state.put("v2", d.handOver());
        }
        return state;
    }

    /** Closes v2, then v1 (which stops the shared launch and timer threads). */
    void close() {
        V2Dispatcher d = v2;
        if (d != null) {
            d.close();
        }
        v1.close();
    }
}
