package org.mpiproxy.mpi.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.mpi.Status;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;

/** MPI matching over scripted message streams: kept, never lost, never overtaking. */
@Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class TagMatcherTest {

    private static final int INT = MpiDatatype.INT.code();

    /** Streams of whole messages per source; a source with nothing has nothing yet. */
    private static final class Scripted implements TaggedTransport {
        final Map<Integer, ArrayDeque<TaggedMessage>> streams = new HashMap<>();
        final ArrayDeque<Integer> rest = new ArrayDeque<>();
        int calls;

        Scripted message(int source, int tag, int... values) {
            ByteBuffer b = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
            b.asIntBuffer().put(values);
            streams.computeIfAbsent(source, k -> new ArrayDeque<>()).addLast(new TaggedMessage(source, tag, INT, b));
            return this;
        }

        @Override
        public void send(int datatype, int tag, ByteBuffer src, int offset, int count, int dest) {
            throw new UnsupportedOperationException();
        }

        @Override
        public TaggedMessage nextMessage(int source, long waitNanos) {
            calls++;
            ArrayDeque<TaggedMessage> q = streams.get(source);
            return q == null ? null : q.pollFirst();
        }

        @Override
        public int[] sources() {
            return new int[] {1, 2};
        }

        @Override
        public TaggedMessage takePartial(int source) {
            return null;
        }

        @Override
        public void send(int datatype, ByteBuffer src, int offset, int count, int dest) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void recv(int datatype, ByteBuffer dst, int offset, int count, int source) {
            for (int i = 0; i < count; i++) {
                dst.putInt(offset + i * 4, rest.removeFirst());
            }
        }

        @Override
        public int[] finish() {
            return new int[0];
        }
    }

    private static int[] ints(ByteBuffer b, int count) {
        int[] out = new int[count];
        b.order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(0, out, 0, count);
        return out;
    }

    @Test
    void shouldMatchByTagKeepingTheOthersInOrder() {
        Scripted t = new Scripted().message(1, 7, 1).message(1, 5, 2).message(1, 7, 3).message(1, 5, 4)
                .message(1, 9, 5);
        TagMatcher m = new TagMatcher(t);
        ByteBuffer b = ByteBuffer.allocate(64);
        assertEquals(new Status(1, 9, 1), m.recv(INT, b, 0, 16, 1, 9));
        assertEquals(5, ints(b, 1)[0]);
        assertEquals(4, m.keptMessages());
        // same source and tag: never overtaking
        assertEquals(new Status(1, 5, 1), m.recv(INT, b, 0, 16, 1, 5));
        assertEquals(2, ints(b, 1)[0]);
        assertEquals(new Status(1, 5, 1), m.recv(INT, b, 0, 16, 1, 5));
        assertEquals(4, ints(b, 1)[0]);
        // any tag: the oldest kept
        assertEquals(new Status(1, 7, 1), m.recv(INT, b, 0, 16, 1, TagMatcher.ANY_TAG));
        assertEquals(1, ints(b, 1)[0]);
        assertEquals(new Status(1, 7, 1), m.recv(INT, b, 0, 16, 1, 7));
        assertEquals(3, ints(b, 1)[0]);
        assertEquals(0, m.keptMessages());
    }

    @Test
    void shouldReceiveFromAnySourceTheFirstSourceWithAMatch() {
        Scripted t = new Scripted().message(1, 1, 10).message(2, 2, 20, 21);
        TagMatcher m = new TagMatcher(t);
        ByteBuffer b = ByteBuffer.allocate(64);
        assertEquals(new Status(2, 2, 2), m.recv(INT, b, 0, 16, TagMatcher.ANY_SOURCE, 2));
        assertEquals(20, ints(b, 2)[0]);
        assertEquals(21, ints(b, 2)[1]);
        assertEquals(new Status(1, 1, 1), m.recv(INT, b, 0, 16, TagMatcher.ANY_SOURCE, TagMatcher.ANY_TAG));
    }

    @Test
    void shouldKeepAMessageOfAnotherDatatypeAndConsumeATruncatedOne() {
        Scripted t = new Scripted().message(1, 3, 1, 2, 3).message(1, 4, 9);
        TagMatcher m = new TagMatcher(t);
        ByteBuffer b = ByteBuffer.allocate(64);
        MpiException type = assertThrows(MpiException.class,
                () -> m.recv(MpiDatatype.DOUBLE.code(), b, 0, 8, 1, 3));
        assertEquals(MpiErrors.ERR_TYPE, type.errorCode());
        assertEquals(1, m.keptMessages());
        MpiException again = assertThrows(MpiException.class,
                () -> m.recv(MpiDatatype.DOUBLE.code(), b, 0, 8, 1, 3));
        assertEquals(MpiErrors.ERR_TYPE, again.errorCode());
        MpiException truncated = assertThrows(MpiException.class, () -> m.recv(INT, b, 0, 2, 1, 3));
        assertEquals(MpiErrors.ERR_TRUNCATE, truncated.errorCode());
        assertEquals(0, m.keptMessages());
        assertEquals(new Status(1, 4, 1), m.recv(INT, b, 0, 2, 1, 4));
    }

    @Test
    void shouldGiveReceivesByElementsTheKeptMessagesFirst() {
        Scripted t = new Scripted().message(1, 7, 1, 2).message(1, 8, 3).message(1, 9, 4);
        t.rest.addAll(java.util.List.of(5, 6));
        TagMatcher m = new TagMatcher(t);
        ByteBuffer b = ByteBuffer.allocate(64);
        m.recv(INT, b, 0, 4, 1, 9);
        assertEquals(2, m.keptMessages());
        m.recvElements(INT, b, 0, 1, 1);
        assertEquals(1, ints(b, 1)[0]);
        m.recvElements(INT, b, 0, 4, 1);
        assertEquals(java.util.List.of(2, 3, 5, 6), java.util.Arrays.stream(ints(b, 4)).boxed().toList());
        assertEquals(0, m.keptMessages());
    }
}
