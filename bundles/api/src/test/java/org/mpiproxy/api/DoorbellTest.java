package org.mpiproxy.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;

class DoorbellTest {

    @Test
    void shouldEncodeAnIpv4AddressAndPortIntoOneNonZeroLong() {
        InetSocketAddress node = new InetSocketAddress("127.0.0.11", 40123);
        long encoded = Doorbell.encode(node);
        assertTrue(encoded != 0);
        assertEquals(node, Doorbell.decode(encoded));
        InetSocketAddress high = new InetSocketAddress("255.254.253.252", 65535);
        assertEquals(high, Doorbell.decode(Doorbell.encode(high)));
    }

    @Test
    void shouldAnnounceTheLoopbackAddressForTheWildcardAndNothingForIpv6OrPortZero() {
        assertEquals(new InetSocketAddress("127.0.0.1", 7000), Doorbell.decode(Doorbell.encode(new InetSocketAddress(7000))));
        assertEquals(0, Doorbell.encode(new InetSocketAddress("::1", 7000)));
        assertEquals(0, Doorbell.encode(new InetSocketAddress("127.0.0.1", 0)));
        assertNull(Doorbell.decode(0));
        assertNull(Doorbell.decode(1L << 48 | 7000), "more than an IPv4 address");
    }

    @Test
    void shouldRecogniseItsDatagramOnly() {
        assertTrue(Doorbell.isDoorbell(Doorbell.datagram()));
        ByteBuffer other = Doorbell.datagram();
        other.put(3, (byte) 'b');
        assertFalse(Doorbell.isDoorbell(other));
        assertFalse(Doorbell.isDoorbell(ByteBuffer.allocate(Doorbell.LENGTH + 1).put(Doorbell.datagram()).put((byte) 0).flip()));
        ByteBuffer atOffset = ByteBuffer.allocate(20);
        atOffset.position(5).put(Doorbell.datagram()).flip().position(5);
        assertTrue(Doorbell.isDoorbell(atOffset), "from its position");
    }
}
