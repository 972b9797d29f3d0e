package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.junit.jupiter.api.Test;

class HeldSendsTest {

    private static ByteBuffer ints(int from, int count) {
        ByteBuffer b = ByteBuffer.allocateDirect(8 + count * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < count; i++) {
            b.putInt(8 + i * 4, from + i);
        }
        return b;
    }

    @Test
    void shouldKeepRecordsInOrderAcrossCompactionAndGrowth() {
        HeldSends held = new HeldSends();
        int next = 0;
        int expected = 0;
        for (int round = 0; round < 200; round++) {
            for (int k = 0; k < 3; k++) {
                assertTrue(held.add(3, 50, ints(next, 50), 8, 200, 1 << 20));
                next += 50;
            }
            for (int k = 0; k < 2; k++) {
                assertEquals(3, held.headDatatype());
                assertEquals(50, held.headCount());
                assertEquals(200, held.headLength());
                for (int i = 0; i < 50; i++) {
                    assertEquals(expected++, held.buffer().getInt(held.headPayloadOffset() + i * 4));
                }
                held.pop();
            }
        }
        assertEquals(200, held.records());
        assertEquals(200 * 200, held.heldBytes());
    }

    @Test
    void shouldRefuseRecordBeyondLimit() {
        HeldSends held = new HeldSends();
        assertTrue(held.add(3, 2, ints(0, 2), 8, 8, 12));
        assertFalse(held.add(3, 2, ints(2, 2), 8, 8, 12));
        assertEquals(8, held.heldBytes());
        held.pop();
        assertTrue(held.isEmpty());
        assertTrue(held.add(3, 2, ints(2, 2), 8, 8, 12));
        held.clear();
        assertTrue(held.isEmpty());
        assertEquals(0, held.heldBytes());
    }
}
