package org.mpiproxy.mpi.internal;

import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_OUTPUT;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.concurrent.locks.ReentrantLock;

import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.mpi.RankOutputHandler;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.OutputStreamReceiver;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/**
 * The OUTPUT streams of every rank of a v2 job (docs/protocol-v2.md 5.5): each fragment taken
 * when it is the next of its stream and acknowledged in any case, whole lines handed to the
 * program's {@link RankOutputHandler}. Fragments arrive during every call of the program and,
 * between calls, on a daemon thread that takes the transport's lock in turn with them; no
 * allocation per fragment. Not thread-safe otherwise: every method runs under that lock.
 */
final class V2HostOutput {

    private final V2Exchange exchange;
    private final RankOutputHandler handler;
    /** Per rank and stream (0 stdout, 1 stderr): made with its first fragment; whether an acknowledgement is due. */
    private final OutputStreamReceiver[][] receivers;
    private final boolean[][] ackDue;
    private final ByteBuffer ackOut;
    private final V2HeaderFlyweight ackHeader = new V2HeaderFlyweight();
    private Selector outputSelector;

    V2HostOutput(V2Exchange exchange, RankOutputHandler handler) {
        this.exchange = exchange;
        this.handler = handler;
        this.receivers = new OutputStreamReceiver[exchange.ranks.length][2];
        this.ackDue = new boolean[exchange.ranks.length][2];
        this.ackOut = ByteBuffer.allocateDirect(V2HeaderDescriptor.MIN_DATAGRAM_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        ackHeader.wrap(ackOut, 0);
    }

    /**
     * One OUTPUT fragment: taken when it is the next of its stream, acknowledged in any case.
     *
     * @return false when it names no stream (the datagram is refused)
     */
    boolean onFragment(int rank, V2HeaderFlyweight inHeader, ByteBuffer in) {
        int code = inHeader.tag();
        if (code != V2HeaderDescriptor.STREAM_STDOUT && code != V2HeaderDescriptor.STREAM_STDERR) {
            return false;
        }
        int i = code - V2HeaderDescriptor.STREAM_STDOUT;
        ackDue[rank][i] = true;
        OutputStreamReceiver[] out = receivers[rank];
        if (out[i] == null) {
            out[i] = new OutputStreamReceiver(handlerOf(rank, i == 1), 0);
        }
        out[i].onFragment(inHeader, in, 0);
        return true;
    }

    /** @return where the lines of one stream of a rank go: the program's handler, its failures reported */
    private OutputStreamReceiver.Lines handlerOf(int rank, boolean stderr) {
        return new OutputStreamReceiver.Lines() {
            @Override
            public void onLine(String line, boolean partial) {
                try {
                    handler.onLine(rank, stderr, line, partial);
                } catch (RuntimeException e) {
                    exchange.diagnostics.println("mpi: the output handler failed on a line of rank " + rank + ": " + e);
                }
            }

            @Override
            public void onDropped(long lines) {
                try {
                    handler.onDropped(rank, stderr, lines);
                } catch (RuntimeException e) {
                    exchange.diagnostics.println("mpi: the output handler failed: " + e);
                }
            }
        };
    }

    /** Acknowledges every stream that received a fragment since its last acknowledgement. */
    void sendAcks() {
        V2Rank[] ranks = exchange.ranks;
        for (int r = 1; r < ranks.length; r++) {
            V2Rank s = ranks[r];
            for (int i = 0; i < 2; i++) {
                if (!ackDue[r][i]) {
                    continue;
                }
                ackDue[r][i] = false;
                OutputStreamReceiver stream = receivers[r][i];
                ackOut.clear();
                long nonce = exchange.random.nextLong();
                s.at.sent(nonce);
                ackHeader.reset(OP_OUTPUT, 0).keyId(exchange.keyId).nodeId(s.auth.nodeId()).jobId(exchange.jobId)
                        .rank(r).tag(V2HeaderDescriptor.STREAM_STDOUT + i).ack(stream == null ? 0 : stream.next())
                        .timestamp(exchange.epochClock.getAsLong()).nonce(nonce);
                int length = s.auth.sign(ackOut, 0);
                ackOut.limit(length).position(0);
                try {
                    // a lost acknowledgement is repaired by the next one: the proxy sends again
                    exchange.channel.send(ackOut, s.address);
                } catch (IOException e) {
                    exchange.diagnostics.println("mpi: acknowledging output to " + s.node + " failed: "
                            + e.getMessage());
                }
            }
        }
    }

    /**
     * Starts the daemon thread that takes the ranks' output between calls of the program.
     *
     * @param io the lock every call of the transport holds
     */
    void start(ReentrantLock io) {
        try {
            outputSelector = Selector.open();
            exchange.channel.register(outputSelector, SelectionKey.OP_READ);
        } catch (IOException e) {
            throw new MpiException(MpiErrors.ERR_IO, "cannot watch the socket for output: " + e.getMessage(), e);
        }
        Thread thread = new Thread(() -> outputLoop(io), "mpi-output-" + Long.toHexString(exchange.jobId));
        thread.setDaemon(true);
        thread.start();
    }

    /** Wakes the output thread up, if it runs, to see the socket closed. */
    void wakeUp() {
        Selector own = outputSelector;
        if (own != null) {
            own.wakeup();
        }
    }

    /** Between calls of the program, takes the ranks' output as it comes (under the lock every call holds). */
    private void outputLoop(ReentrantLock io) {
        try (Selector own = outputSelector) {
            while (!exchange.closed()) {
                own.select(1000);
                own.selectedKeys().clear();
                io.lock();
                try {
                    if (exchange.closed()) {
                        break;
                    }
                    exchange.receiveAvailable();
                } finally {
                    io.unlock();
                }
            }
        } catch (IOException | ClosedSelectorException e) {
            if (!exchange.closed()) {
                exchange.diagnostics.println("mpi: receiving output failed: " + e);
            }
        } catch (RuntimeException e) {
            exchange.diagnostics.println("mpi: receiving output failed: " + e);
        }
    }
}
