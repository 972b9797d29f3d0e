package mpi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * Persistent requests, matched probes, buffered sends, cancellation and attributes on worlds of
 * two ranks, each rank's values checked exactly.
 */
class PointToPointModesTest {

    /** The ceiling of a loop of {@code imProbe} calls: only catches a hang. */
    static final long CEILING_NANOS = 60_000_000_000L;

    /** The key, in the system properties the ranks share, of the latch of {@link Programs#cancelled}. */
    static final String CANCELLED = PointToPointModesTest.class.getName() + ".cancelled";

    /** The error class of {@code call}, or -1 when it succeeded. */
    interface Call {
        void run() throws MPIException;
    }

    static int errorClass(Call call) {
        try {
            call.run();
            return -1;
        } catch (MPIException e) {
            return e.getErrorClass();
        }
    }

    static final class Programs {

        /** Rank 0 sends (i * 3 + 1) ten times through one persistent pair; rank 1 answers 2v + 1 through another. */
        static Object pingPong(Intracomm world) throws MPIException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            IntBuffer out = IntBuffer.allocate(1);
            IntBuffer in = IntBuffer.allocate(1);
            List<Object> seen = new ArrayList<>();
            if (world.getRank() == 0) {
                Prequest send = world.sendInit(out, 1, MPI.INT, 1, 7);
                Prequest recv = world.recvInit(in, 1, MPI.INT, 1, 8);
                Prequest[] both = {send, recv};
                for (int i = 0; i < 10; i++) {
                    out.put(0, i * 3 + 1);
                    Prequest.startAll(both);
                    Status[] statuses = Request.waitAllStatus(both);
                    seen.add(in.get(0) + "/" + statuses[1].getSource() + "/" + statuses[1].getTag() + "/"
                            + recv.isNull());
                }
                // a started receive may not be started again; one cancelled completes cancelled
                recv.start();
                seen.add(errorClass(recv::start));
                recv.cancel();
                seen.add(recv.waitStatus().isCancelled());
                recv.free();
                seen.add(recv.isNull());
                seen.add(errorClass(recv::start));
            } else {
                Prequest recv = world.recvInit(in, 1, MPI.INT, 0, 7);
                Prequest send = world.sendInit(out, 1, MPI.INT, 0, 8);
                for (int i = 0; i < 10; i++) {
                    recv.start();
                    recv.waitFor();
                    seen.add(in.get(0));
                    out.put(0, 2 * in.get(0) + 1);
                    send.start();
                    send.waitFor();
                }
            }
            return seen;
        }

        /**
         * Rank 1 sends tags 1, 2 and 3; rank 0 takes the tag-1 message first, and no later probe,
         * nor a receive of any tag, finds it again.
         */
        static Object matched(Intracomm world) throws MPIException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            List<Object> seen = new ArrayList<>();
            if (world.getRank() == 1) {
                world.send(new int[] {11, 12}, 2, MPI.INT, 0, 1);
                world.send(new int[] {21, 22, 23}, 3, MPI.INT, 0, 2);
                world.send(new int[] {31}, 1, MPI.INT, 0, 3);
                return seen;
            }
            Message first = new Message();
            seen.add(first.isNull());
            Status s1 = first.mProbe(1, 1, world);
            seen.add(s1.getTag() + ":" + s1.getCount(MPI.INT));
            // the matched message is nobody's but first's: a probe of any tag finds tag 2
            Status any = world.probe(1, MPI.ANY_TAG);
            seen.add(any.getTag());
            seen.add(world.iProbe(1, 1) == null);
            Message second = new Message();
            Status s2 = second.mProbe(MPI.ANY_SOURCE, MPI.ANY_TAG, world);
            seen.add(s2.getSource() + ":" + s2.getTag() + ":" + s2.getCount(MPI.INT));
            int[] b2 = new int[3];
            seen.add(second.mRecv(b2, 3, MPI.INT).getTag());
            seen.add(Arrays.toString(b2));
            int[] b1 = new int[2];
            seen.add(first.mRecv(b1, 2, MPI.INT).getCount(MPI.INT));
            seen.add(Arrays.toString(b1));
            seen.add(first.isNull());
            seen.add(errorClass(() -> first.mRecv(b1, 2, MPI.INT)));
            Message third = new Message();
            long start = System.nanoTime();
            Status s3 = null;
            while (s3 == null && System.nanoTime() - start < CEILING_NANOS) {
                s3 = third.imProbe(1, 3, world);
            }
            IntBuffer b3 = IntBuffer.allocate(1);
            Request r3 = third.imRecv(b3, 1, MPI.INT);
            seen.add(r3.waitStatus().getTag() + ":" + b3.get(0));
            Message nobody = new Message();
            nobody.mProbe(MPI.PROC_NULL, 0, world);
            seen.add(nobody.isNoProc() + ":" + nobody.mRecv(new int[0], 0, MPI.INT).getSource() + ":" + nobody.isNull());
            seen.add(new Message().imProbe(1, 9, world) == null);
            return seen;
        }

        /** Buffered sends against a buffer of room for one message of 4 ints. */
        static Object buffered(Intracomm world) throws MPIException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            List<Object> seen = new ArrayList<>();
            if (world.getRank() == 1) {
                int[] a = new int[4];
                world.recv(a, 4, MPI.INT, 0, 1);
                seen.add(Arrays.toString(a));
                IntBuffer b = IntBuffer.allocate(4);
                world.recv(b, 4, MPI.INT, 0, 2);
                seen.add(Arrays.toString(b.array()));
                return seen;
            }
            int[] four = {1, 2, 3, 4};
            seen.add(errorClass(() -> world.bSend(four, 4, MPI.INT, 1, 1)));
            byte[] buffer = new byte[4 * 4 + MPI.BSEND_OVERHEAD];
            MPI.attachBuffer(buffer);
            seen.add(errorClass(() -> MPI.attachBuffer(new byte[10])));
            world.bSend(four, 4, MPI.INT, 1, 1);
            seen.add(errorClass(() -> world.bSend(new int[5], 5, MPI.INT, 1, 1)));
            Request r = world.ibSend(IntBuffer.wrap(new int[] {5, 6, 7, 8}), 4, MPI.INT, 1, 2);
            r.waitFor();
            seen.add(MPI.detachBuffer() == buffer);
            seen.add(errorClass(() -> world.bSend(four, 4, MPI.INT, 1, 1)));
            return seen;
        }

        /**
         * An unmatched receive and a send still queued for its link, cancelled; the messages that
         * follow go to the receives after them. Rank 1 makes no call (so drains no link) until
         * rank 0 has cancelled: it waits for {@link #CANCELLED}, outside MPI.
         */
        static Object cancelled(Intracomm world) throws MPIException, InterruptedException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            List<Object> seen = new ArrayList<>();
            int big = 40_000;
            CountDownLatch cancelled = (CountDownLatch) System.getProperties().computeIfAbsent(CANCELLED,
                    k -> new CountDownLatch(1));
            if (world.getRank() == 0) {
                Request r = world.iRecv(IntBuffer.allocate(1), 1, MPI.INT, 1, 99);
                r.cancel();
                Status s = r.waitStatus();
                seen.add(s.isCancelled());
                seen.add(r.isNull());
                // a message larger than the link's ring cannot leave at once, so the next one waits queued
                Request first = world.iSend(IntBuffer.allocate(big), big, MPI.INT, 1, 5);
                Request queued = world.iSend(IntBuffer.allocate(big), big, MPI.INT, 1, 6);
                queued.cancel();
                cancelled.countDown();
                seen.add(queued.waitStatus().isCancelled());
                Status f = first.waitStatus();
                seen.add(f.isCancelled());
                world.send(new int[] {-1}, 1, MPI.INT, 1, 6);
                world.barrier();
                int[] got = new int[1];
                world.recv(got, 1, MPI.INT, 1, 99);
                seen.add(got[0]);
            } else {
                seen.add(cancelled.await(60, TimeUnit.SECONDS));
                IntBuffer a = IntBuffer.allocate(big);
                seen.add(world.recv(a, big, MPI.INT, 0, 5).getCount(MPI.INT));
                IntBuffer b = IntBuffer.allocate(big);
                Status s = world.recv(b, big, MPI.INT, 0, 6);
                seen.add(s.getCount(MPI.INT) + ":" + b.get(0));
                world.barrier();
                world.send(new int[] {99}, 1, MPI.INT, 0, 99);
            }
            return seen;
        }

        /** Predefined attributes, and a key's value copied by dup, not by split, deleted, freed. */
        static Object attributes(Intracomm world) throws MPIException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            List<Object> seen = new ArrayList<>();
            Object tagUb = world.getAttr(MPI.TAG_UB);
            seen.add(tagUb instanceof Integer t && t >= 32767);
            seen.add(world.getAttr(MPI.HOST));
            seen.add(world.getAttr(MPI.IO));
            seen.add(world.getAttr(MPI.WTIME_IS_GLOBAL));
            int key = Comm.createKeyval();
            seen.add(world.getAttr(key) == null);
            int[] value = {world.getRank(), 7};
            world.setAttr(key, value);
            value[1] = 8;
            Intracomm dup = world.dup();
            Intracomm part = world.split(0, 0);
            seen.add(Arrays.toString((int[]) world.getAttr(key)));
            seen.add(Arrays.toString((int[]) dup.getAttr(key)));
            seen.add(part.getAttr(key) == null);
            dup.setAttr(key, "dup's own");
            seen.add(Arrays.toString((int[]) world.getAttr(key)) + "/" + dup.getAttr(key));
            Intracomm dupOfDup = dup.dup();
            dup.free();
            seen.add(dupOfDup.getAttr(key));
            seen.add(errorClass(() -> dup.getAttr(key)));
            world.deleteAttr(key);
            seen.add(world.getAttr(key) == null);
            Comm.freeKeyval(key);
            seen.add(errorClass(() -> world.setAttr(key, "late")));
            seen.add(dupOfDup.getAttr(key));
            seen.add(errorClass(() -> world.setAttr(MPI.TAG_UB, 1)));
            seen.add(errorClass(() -> world.getAttr(key + 1000)));
            return seen;
        }
    }

    @Test
    void shouldPingPongThroughPersistentRequestsStartedTenTimes() throws Exception {
        List<Object> ranks = World.values(2, Programs.class, "pingPong");
        List<Object> zero = new ArrayList<>();
        List<Object> one = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            zero.add(2 * (i * 3 + 1) + 1 + "/1/8/false");
            one.add(i * 3 + 1);
        }
        zero.addAll(List.of(MPI.ERR_REQUEST, true, true, MPI.ERR_REQUEST));
        assertEquals(zero, ranks.get(0));
        assertEquals(one, ranks.get(1));
    }

    @Test
    void shouldReceiveAMatchedMessageThatNoLaterProbeOrReceiveTakes() throws Exception {
        List<Object> ranks = World.values(2, Programs.class, "matched");
        assertEquals(List.of(true, "1:2", 2, true, "1:2:3", 2, "[21, 22, 23]", 2, "[11, 12]", true,
                MPI.ERR_REQUEST, "3:31", "true:" + MPI.PROC_NULL + ":true", true), ranks.get(0));
    }

    @Test
    void shouldFailABufferedSendThatTheAttachedBufferHasNoRoomFor() throws Exception {
        List<Object> ranks = World.values(2, Programs.class, "buffered");
        assertEquals(List.of(MPI.ERR_BUFFER, MPI.ERR_BUFFER, MPI.ERR_BUFFER, true, MPI.ERR_BUFFER), ranks.get(0));
        assertEquals(List.of("[1, 2, 3, 4]", "[5, 6, 7, 8]"), ranks.get(1));
    }

    @Test
    void shouldCancelAnUnmatchedReceiveAndAQueuedSend() throws Exception {
        List<Object> ranks;
        try {
            ranks = World.values(2, Programs.class, "cancelled");
        } finally {
            System.getProperties().remove(CANCELLED);
        }
        assertEquals(List.of(true, true, true, false, 99), ranks.get(0));
        assertEquals(List.of(true, 40_000, "1:-1"), ranks.get(1));
    }

    @Test
    void shouldCopyAttributesOnDupAndAnswerThePredefinedOnes() throws Exception {
        List<Object> ranks = World.values(2, Programs.class, "attributes");
        for (int r = 0; r < 2; r++) {
            String mine = "[" + r + ", 7]";
            assertEquals(List.of(true, MPI.PROC_NULL, MPI.ANY_SOURCE, false, true, mine, mine, true,
                    mine + "/dup's own", "dup's own", MPI.ERR_COMM, true, MPI.ERR_KEYVAL, "dup's own", MPI.ERR_KEYVAL,
                    MPI.ERR_KEYVAL), ranks.get(r));
        }
    }
}
