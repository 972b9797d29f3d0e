package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.mpiproxy.api.Doorbell;
import org.mpiproxy.protocol.V1HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderDescriptor;

class StartupGateTest {

    private static final long WAIT = TimeUnit.SECONDS.toNanos(60);

    private final AtomicLong now = new AtomicLong(1_000);
    private final AtomicBoolean channels = new AtomicBoolean();
    private final AtomicBoolean launcher = new AtomicBoolean();

    private StartupGate gate(boolean tookOver) {
        return new StartupGate(WAIT, channels::get, launcher::get, tookOver, now::get);
    }

    private static ByteBuffer v2(int op) {
        ByteBuffer b = ByteBuffer.allocate(V2HeaderDescriptor.HEADER_LENGTH);
        b.put(V2HeaderDescriptor.MAGIC_OFFSET, (byte) V2HeaderDescriptor.MAGIC);
        b.put(V2HeaderDescriptor.OPERATION_OFFSET, (byte) op);
        return b;
    }

    private static ByteBuffer v1(int op) {
        ByteBuffer b = ByteBuffer.allocate(V1HeaderDescriptor.HEADER_LENGTH);
        b.put(V1HeaderDescriptor.OPERATION_OFFSET, (byte) op);
        return b;
    }

    @Test
    void aFreshProxyAnswersNothingUntilItsChannelsAndLocalLauncherAreBound() {
        StartupGate gate = gate(false);
        assertFalse(gate.admits(v2(V2HeaderDescriptor.OP_STATUS)));
        channels.set(true);
        assertFalse(gate.admits(v2(V2HeaderDescriptor.OP_EXEC)));
        launcher.set(true);
        assertTrue(gate.admits(v2(V2HeaderDescriptor.OP_EXEC)));
        assertEquals(2, gate.droppedBeforeReady());
    }

    @Test
    void aProxyThatTookOverServesItsJobsAtOnceButHoldsExecsUntilALauncherForCore0IsBound() {
        channels.set(true);
        StartupGate gate = gate(true);
        assertTrue(gate.admits(v2(V2HeaderDescriptor.OP_SEND)), "a taken-over job's data goes on");
        assertTrue(gate.admits(v2(V2HeaderDescriptor.OP_STATUS)));
        assertTrue(gate.admits(v1(V1HeaderDescriptor.OP_SEND)));
        assertFalse(gate.admits(v2(V2HeaderDescriptor.OP_EXEC)), "no launcher yet: the sender resends");
        assertFalse(gate.admits(v1(V1HeaderDescriptor.OP_EXEC)));
        assertEquals(2, gate.droppedBeforeReady());
        launcher.set(true);
        assertTrue(gate.admits(v2(V2HeaderDescriptor.OP_EXEC)));
        launcher.set(false);
        assertTrue(gate.admits(v2(V2HeaderDescriptor.OP_EXEC)), "a later absence is answered with an error");
    }

    @Test
    void theWaitEndsTheHoldEvenWithoutALauncher() {
        channels.set(true);
        StartupGate gate = gate(true);
        now.addAndGet(WAIT - 1);
        assertFalse(gate.admits(v2(V2HeaderDescriptor.OP_EXEC)));
        assertFalse(gate.waitedLongEnough());
        now.incrementAndGet();
        assertTrue(gate.waitedLongEnough());
        assertTrue(gate.admits(v2(V2HeaderDescriptor.OP_EXEC)));
    }

    @Test
    void onlyExecsAreRecognisedAsExecs() {
        assertTrue(StartupGate.isExec(v2(V2HeaderDescriptor.OP_EXEC)));
        assertTrue(StartupGate.isExec(v1(V1HeaderDescriptor.OP_EXEC)));
        assertFalse(StartupGate.isExec(v2(V2HeaderDescriptor.OP_TERMINATE)));
        assertFalse(StartupGate.isExec(v1(V1HeaderDescriptor.OP_TERMINATE)));
        assertFalse(StartupGate.isExec(ByteBuffer.allocate(0)));
        assertFalse(StartupGate.isExec(ByteBuffer.wrap(new byte[] {(byte) V2HeaderDescriptor.MAGIC})));
        assertFalse(StartupGate.isExec(Doorbell.datagram()));
    }
}
