package org.mpiproxy.api;

import java.lang.invoke.VarHandle;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;

/**
 * A ring's doorbell: where its consumer waits when it sleeps, so that the producer can wake it
 * at once instead of the consumer waking on a timer (docs/ring-layout.md, "Doorbell"). The
 * consumer announces a UDP address in the ring ({@link MessageRing#doorbell(long)}); a producer
 * that published records and finds an address there takes it ({@link MessageRing#takeDoorbell})
 * and sends {@link #datagram()} to it. Only IPv4 addresses are encoded; a consumer bound to the
 * wildcard address announces the loopback address.
 * <p>
 * A doorbell only wakes: it carries no data, and a consumer treats a forged or late one as a
 * spurious wake-up.
 */
public final class Doorbell {

    /** The eight bytes of a doorbell datagram: {@code MPXBELL} and a newline. */
    private static final byte[] MAGIC = {'M', 'P', 'X', 'B', 'E', 'L', 'L', '\n'};

    /** Length of a doorbell datagram. */
    public static final int LENGTH = MAGIC.length;

    private Doorbell() {
    }

    /**
     * @param address where the consumer waits
     * @return the encoded address ({@code ipv4 << 16 | port}, never 0), or 0 when it cannot be
     *         encoded (not IPv4, port 0)
     */
    public static long encode(InetSocketAddress address) {
        InetAddress ip = address.getAddress();
        if (!(ip instanceof Inet4Address) || address.getPort() == 0) {
            return 0;
        }
        byte[] b = ip.isAnyLocalAddress() ? new byte[] {127, 0, 0, 1} : ip.getAddress();
        long v4 = ((b[0] & 0xffL) << 24) | ((b[1] & 0xffL) << 16) | ((b[2] & 0xffL) << 8) | (b[3] & 0xffL);
        return v4 << 16 | address.getPort();
    }

    /**
     * @param encoded a value of {@link #encode}
     * @return the address, or {@code null} when {@code encoded} is not one
     */
    public static InetSocketAddress decode(long encoded) {
        int port = (int) (encoded & 0xffff);
        long v4 = encoded >>> 16;
        if (port == 0 || v4 == 0 || v4 > 0xffff_ffffL) {
            return null;
        }
        byte[] b = {(byte) (v4 >>> 24), (byte) (v4 >>> 16), (byte) (v4 >>> 8), (byte) v4};
        try {
            return new InetSocketAddress(InetAddress.getByAddress(b), port);
        } catch (UnknownHostException e) {
            return null; // not reached: four bytes are always an IPv4 address
        }
    }

    /** @return a new buffer holding one doorbell datagram, ready to send */
    public static ByteBuffer datagram() {
        return ByteBuffer.wrap(MAGIC.clone());
    }

    /**
     * @param datagram a received datagram, from its position to its limit
     * @return {@code true} when it is a doorbell
     */
    public static boolean isDoorbell(ByteBuffer datagram) {
        if (datagram.remaining() != LENGTH) {
            return false;
        }
        for (int i = 0; i < LENGTH; i++) {
            if (datagram.get(datagram.position() + i) != MAGIC[i]) {
                return false;
            }
        }
        return true;
    }

    /**
     * Producer, after it published records: takes the ring's doorbell if its consumer sleeps on one.
     * Costs a full fence and a volatile read when nobody sleeps.
     *
     * @param ring the ring just written
     * @return the doorbell to ring (encoded), or 0
     */
    public static long take(MessageRing ring) {
        // the records must be visible before the doorbell is read: a consumer that announces it
        // after this read sees them when it checks the ring once more
        VarHandle.fullFence();
        long bell = ring.doorbell();
        return bell != 0 && ring.takeDoorbell(bell) ? bell : 0;
    }

    /**
     * Consumer, before it sleeps: announces its doorbell and checks the ring once more.
     *
     * @param ring     the ring it waits to read
     * @param doorbell its doorbell, encoded
     * @return {@code true} when the ring holds records already (do not sleep)
     */
    public static boolean arm(MessageRing ring, long doorbell) {
        ring.doorbell(doorbell);
        // the announcement must be visible before the ring is checked once more
        VarHandle.fullFence();
        return !ring.isEmpty();
    }
}
