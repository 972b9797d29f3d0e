package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mpiproxy.proxy.internal.V1Datagrams.exec;
import static org.mpiproxy.proxy.internal.V1Datagrams.recv;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V1HeaderDescriptor;
import org.mpiproxy.protocol.V1HeaderFlyweight;

/**
 * The acknowledgement of an EXEC leaves from the launch thread as soon as the process runs,
 * without waiting for the receive thread to wake up and run {@code doWork}.
 */
class LaunchAcknowledgementTest {

    private static final InetSocketAddress HOST = new InetSocketAddress("127.0.0.1", 40001);

    /** One datagram sent, and the thread that sent it. */
    private record Reply(int operation, int result, int rankId, String thread) {
    }

    /** A transport any thread may send through; wake-ups are counted as permits. */
    private static final class Replies implements DatagramTransport {
        final BlockingQueue<Reply> sent = new LinkedBlockingQueue<>();
        final Semaphore wakeups = new Semaphore(0);
        /** A closed transport: every send fails. */
        volatile boolean closed;

        @Override
        public boolean send(ByteBuffer datagram, InetSocketAddress target) {
            if (closed) {
                return false;
            }
            V1HeaderFlyweight header = new V1HeaderFlyweight();
            ByteBuffer copy = ByteBuffer.allocate(datagram.remaining()).order(ByteOrder.LITTLE_ENDIAN);
            copy.put(datagram).flip();
            header.wrap(copy, 0);
            sent.add(new Reply(header.operation(), header.result(), header.rankId(), Thread.currentThread().getName()));
            return true;
        }

        @Override
        public InetSocketAddress localAddress() {
            return new InetSocketAddress("127.0.0.1", 6660);
        }

        @Override
        public int maxDatagramSize() {
            return V1HeaderDescriptor.MAX_DATAGRAM_LENGTH;
        }

        @Override
        public void wakeup() {
            wakeups.release();
        }
    }

    private final FakeChannelManager channels = new FakeChannelManager();
    private final FakeLauncher launcher = new FakeLauncher();
    private final Replies replies = new Replies();
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final ExecutorService launches = Executors.newSingleThreadExecutor(r -> new Thread(r, "test-launch"));
    /** Launches wait for this, so that a test can act while its rank is starting. */
    private final CountDownLatch launchMayRun = new CountDownLatch(1);
    private final V1Dispatcher dispatcher = new V1Dispatcher(channels,
            new ProxySettings(Path.of("logs"), 1 << 20, Duration.ofSeconds(30), Duration.ofSeconds(10)),
            coreId -> request -> {
                try {
                    launchMayRun.await(Await.CEILING.toSeconds(), TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return launcher.launch(request);
            }, replies::wakeup, launches, timer);

    @AfterEach
    void tearDown() {
        dispatcher.close();
        timer.shutdownNow();
    }

    @Test
    void shouldAcknowledgeAStartedRankFromTheLaunchThreadWithoutTheReceiveThread() throws Exception {
        dispatcher.onDatagram(exec(1, 0, 3, "prog a b"), HOST, replies);
        launchMayRun.countDown();

        // doWork is never called
        Reply ack = replies.sent.poll(Await.CEILING.toSeconds(), TimeUnit.SECONDS);
        assertNotNull(ack, "no acknowledgement without the receive thread");
        assertEquals(new Reply(V1HeaderDescriptor.OP_EXEC, MpiErrors.SUCCESS, 1, "test-launch"), ack);
        assertEquals(1, dispatcher.counter(ProxyCounter.EXEC_STARTED));
    }

    @Test
    void shouldAcknowledgeAFailedLaunchFromTheLaunchThreadAndWakeTheReceiveThreadForAPendingRecv()
            throws Exception {
        launcher.failWith = "no such program";
        // a RECV for the rank arrives before its launch fails: the receive thread must answer it
        dispatcher.onDatagram(exec(1, 0, 3, "prog"), HOST, replies);
        dispatcher.onDatagram(recv(1, MpiDatatype.INT, 1), HOST, replies);
        assertTrue(replies.sent.isEmpty(), "the RECV waits for the launch");
        launchMayRun.countDown();

        Reply ack = replies.sent.poll(Await.CEILING.toSeconds(), TimeUnit.SECONDS);
        assertNotNull(ack, "no acknowledgement without the receive thread");
        assertEquals(V1HeaderDescriptor.OP_EXEC, ack.operation());
        assertEquals(MpiErrors.ERR_IO, ack.result());
        assertEquals("test-launch", ack.thread());
        assertTrue(replies.wakeups.tryAcquire(Await.CEILING.toSeconds(), TimeUnit.SECONDS),
                "the receive thread is woken for the RECV");
        dispatcher.doWork(replies);
        Reply recvReply = replies.sent.poll(Await.CEILING.toSeconds(), TimeUnit.SECONDS);
        assertNotNull(recvReply, "the pending RECV is answered");
        assertEquals(V1HeaderDescriptor.OP_RECV, recvReply.operation());
    }

    @Test
    void shouldAcknowledgeThroughTheReceiveThreadWhenTheTransportThatReceivedTheExecWasClosedMeanwhile()
            throws Exception {
        Replies old = new Replies();
        dispatcher.onDatagram(exec(1, 0, 3, "prog a b"), HOST, old);
        old.closed = true; // a hot update of the transport replaces it while the rank starts
        launchMayRun.countDown();

        assertTrue(replies.wakeups.tryAcquire(Await.CEILING.toSeconds(), TimeUnit.SECONDS),
                "the receive thread is woken");
        dispatcher.doWork(replies);
        Reply ack = replies.sent.poll(Await.CEILING.toSeconds(), TimeUnit.SECONDS);
        assertNotNull(ack, "the acknowledgement goes out through the new transport");
        assertEquals(new Reply(V1HeaderDescriptor.OP_EXEC, MpiErrors.SUCCESS, 1, Thread.currentThread().getName()),
                ack, "sent by the thread that ran doWork");
        assertTrue(old.sent.isEmpty());
    }
}
