package org.mpiproxy.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class V2HeaderFlyweightTest {

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void shouldRoundTripEveryFieldWhateverTheBufferOrder(boolean direct) {
        ByteBuffer b = (direct ? ByteBuffer.allocateDirect(200) : ByteBuffer.allocate(200)).order(ByteOrder.BIG_ENDIAN);
        V2HeaderFlyweight f = new V2HeaderFlyweight().wrap(b, 8).reset(V2HeaderDescriptor.OP_RECV, 3).keyId(255)
                .result(65535).datatype(12).nodeId(-2).jobId(Long.MIN_VALUE).rank(0xffffffffL).tag(-1)
                .sequence(Long.MAX_VALUE).ack(42).timestamp(123456789L).nonce(-7).argument(0xfffffffeL).core(65534)
                .payloadLength(65533);
        assertEquals(0xB2, b.get(8) & 0xff);
        assertEquals(V2HeaderDescriptor.OP_RECV, f.operation());
        assertEquals(3, f.flags());
        assertEquals(255, f.keyId());
        assertEquals(65535, f.result());
        assertEquals(12, f.datatype());
        assertEquals(-2, f.nodeId());
        assertEquals(Long.MIN_VALUE, f.jobId());
        assertEquals(0xffffffffL, f.rank());
        assertEquals(-1, f.tag());
        assertEquals(Long.MAX_VALUE, f.sequence());
        assertEquals(42, f.ack());
        assertEquals(123456789L, f.timestamp());
        assertEquals(-7, f.nonce());
        assertEquals(0xfffffffeL, f.argument());
        assertEquals(65534, f.core());
        assertEquals(65533, f.payloadLength());
        assertEquals(8 + 72, f.payloadOffset());
        // little-endian on the wire even though the buffer is big-endian
        assertEquals(42, b.get(8 + V2HeaderDescriptor.ACK_OFFSET));
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void shouldZeroTheHeaderOnReset(boolean direct) {
        ByteBuffer b = direct ? ByteBuffer.allocateDirect(80) : ByteBuffer.allocate(80);
        for (int i = 0; i < 80; i++) {
            b.put(i, (byte) 0xff);
        }
        V2HeaderFlyweight f = new V2HeaderFlyweight().wrap(b, 0).reset(V2HeaderDescriptor.OP_SEND, 0);
        for (int i = 3; i < 72; i++) {
            assertEquals(0, b.get(i), "byte " + i);
        }
        assertEquals(V2HeaderDescriptor.OP_SEND, f.operation());
        assertEquals((byte) 0xff, b.get(72));
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, 9, 100})
    void shouldRefuseToWrapWhereNoHeaderFits(int offset) {
        assertThrows(IndexOutOfBoundsException.class, () -> new V2HeaderFlyweight().wrap(ByteBuffer.allocate(80), offset));
    }
}
