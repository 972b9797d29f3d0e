package org.mpiproxy.transport.udp.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

class UdpTransportComponentTest {

    @Test
    void shouldUseContractDefaults() {
        UdpTransportSettings s = UdpTransportComponent.settings(TestConfigs.of(UdpTransportComponent.Config.class,
                Map.of()));
        assertEquals(new InetSocketAddress("127.0.0.1", 6660), s.bindAddress());
        assertEquals(4194304, s.receiveBufferSize());
        assertEquals(4194304, s.sendBufferSize());
        assertEquals(65507, s.maxDatagramSize());
    }

    @Test
    void shouldRejectPortOutOfRangeNamingKeyAndValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> UdpTransportComponent.settings(TestConfigs.of(UdpTransportComponent.Config.class,
                        Map.of("port", 70000))));
        assertTrue(e.getMessage().contains("port=70000"), e.getMessage());
    }

    @Test
    void shouldRejectDatagramSizeAboveUdpMaximum() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> UdpTransportComponent.settings(TestConfigs.of(UdpTransportComponent.Config.class,
                        Map.of("max.datagram.size", 65508))));
        assertTrue(e.getMessage().contains("max.datagram.size=65508"), e.getMessage());
    }

    @Test
    void shouldRejectTinyBuffersAndBlankAddress() {
        assertThrows(IllegalArgumentException.class, () -> UdpTransportSettings.of("127.0.0.1", 0, 10, 65536, 1448));
        assertThrows(IllegalArgumentException.class, () -> UdpTransportSettings.of("127.0.0.1", 0, 65536, 10, 1448));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> UdpTransportSettings.of(" ", 0, 65536, 65536, 1448));
        assertTrue(e.getMessage().startsWith("address="), e.getMessage());
    }

    @Test
    void shouldDeliverToBoundHandlerAfterActivation() throws Exception {
        UdpTransportComponent component = new UdpTransportComponent();
        component.start(TestConfigs.of(UdpTransportComponent.Config.class, Map.of("port", 0)));
        try (DatagramChannel client = DatagramChannel.open()) {
            RecordingHandler handler = new RecordingHandler();
            component.bindHandler(handler);
            component.wakeup();
            client.send(ByteBuffer.wrap(new byte[] {42}), component.localAddress());
            // a ceiling only: the wait ends with the datagram
            RecordingHandler.Received r = handler.received.poll(60, TimeUnit.SECONDS);
            assertNotNull(r);
            assertEquals(42, r.bytes()[0]);
            assertEquals(1L, component.counters().get("datagrams.in"));
        } finally {
            component.deactivate();
        }
    }
}
