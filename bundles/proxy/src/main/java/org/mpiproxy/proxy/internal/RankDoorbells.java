package org.mpiproxy.proxy.internal;

import java.net.InetSocketAddress;

import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.Doorbell;
import org.mpiproxy.api.MessageRing;

/** The proxy's side of ring doorbells (docs/ring-layout.md, "Doorbell"). Receive thread only. */
final class RankDoorbells {

    private RankDoorbells() {
    }

    /**
     * After records were published into a rank's ring: wakes the rank if it sleeps on its doorbell.
     *
     * @return {@code true} when a doorbell datagram was sent
     */
    static boolean ringIfArmed(MessageRing ring, DatagramTransport transport) {
        long bell = Doorbell.take(ring);
        if (bell == 0) {
            return false;
        }
        InetSocketAddress to = Doorbell.decode(bell);
        return to != null && transport.send(Doorbell.datagram(), to);
    }
}
