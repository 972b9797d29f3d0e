package org.mpiproxy.protocol;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class V1HeaderFlyweightTest {

    private static ByteBuffer buffer(boolean direct, ByteOrder order) {
        ByteBuffer b = direct ? ByteBuffer.allocateDirect(64) : ByteBuffer.allocate(64);
        return b.order(order);
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void shouldWriteLittleEndianFieldsWhateverTheBufferOrder(boolean direct) {
        ByteBuffer b = buffer(direct, ByteOrder.BIG_ENDIAN);
        new V1HeaderFlyweight().wrap(b, 4).set(V1HeaderDescriptor.OP_EXEC, 35, 0x0102, 0x0304, 0x0506, 0xa1b2c3d4L);
        byte[] header = new byte[12];
        b.get(4, header);
        assertArrayEquals(new byte[] {2, 35, 0x02, 0x01, 0x04, 0x03, 0x06, 0x05,
            (byte) 0xd4, (byte) 0xc3, (byte) 0xb2, (byte) 0xa1}, header);
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void shouldReadBackUnsignedValues(boolean direct) {
        ByteBuffer b = buffer(direct, ByteOrder.LITTLE_ENDIAN);
        V1HeaderFlyweight f = new V1HeaderFlyweight().wrap(b, 0)
                .set(255, 254, 65535, 65534, 65533, 0xffffffffL);
        assertEquals(255, f.operation());
        assertEquals(254, f.result());
        assertEquals(65535, f.rankId());
        assertEquals(65534, f.coreId());
        assertEquals(65533, f.coreCount());
        assertEquals(65533, f.datatype());
        assertEquals(0xffffffffL, f.datacount());
        assertEquals(12, f.payloadOffset());
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, 53, 60})
    void shouldRefuseToWrapWhereNoHeaderFits(int offset) {
        assertThrows(IndexOutOfBoundsException.class, () -> new V1HeaderFlyweight().wrap(ByteBuffer.allocate(64), offset));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 3})
    void shouldNameKnownOperations(int op) {
        assertEquals(new String[] {"SEND", "RECV", "EXEC", "TERMINATE"}[op], V1HeaderDescriptor.operationName(op));
    }
}
