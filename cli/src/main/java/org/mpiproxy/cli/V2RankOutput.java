package org.mpiproxy.cli;

import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_OUTPUT;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.channels.DatagramChannel;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;

import org.mpiproxy.protocol.OutputStreamReceiver;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/**
 * The output streams of ranks 1..N-1 that {@link V2Session} receives (OUTPUT, docs/protocol-v2.md
 * 5.5): standard output and error printed, tagged when asked, PMI lines handed to the launcher's
 * fence, every stream acknowledged to its rank's node.
 * <p>
 * Threads: {@link #pmi} from any thread; the others on the thread that receives (the caller of
 * {@code exec}, then the session's thread).
 */
final class V2RankOutput {

    private final long jobId;
    private final List<Placement> ranks;
    private final V2Control.Signer signer;
    private final DatagramChannel output;
    private final PrintStream out;
    private final PrintStream err;
    private final boolean tag;
    private final Map<Long, OutputStreamReceiver> streams = new HashMap<>();
    /** Streams that took output since their last acknowledgement. */
    private final Set<Long> toAck = new LinkedHashSet<>();
    /** Gets the ranks' PMI lines (their PMI streams); returns a problem for the log, or null. */
    private volatile BiFunction<Integer, String, String> pmiLines;

    /**
     * @param jobId  the job
     * @param ranks  placement of rank r at element r-1
     * @param signer signs the acknowledgements and holds each datagram received
     * @param output the session's socket
     * @param out    where the ranks' standard output goes; also its lock
     * @param err    where their standard error goes; also its lock
     * @param tag    prefix lines with {@code [rank] }
     */
    V2RankOutput(long jobId, List<Placement> ranks, V2Control.Signer signer, DatagramChannel output, PrintStream out,
                 PrintStream err, boolean tag) {
        this.jobId = jobId;
        this.ranks = ranks;
        this.signer = signer;
        this.output = output;
        this.out = out;
        this.err = err;
        this.tag = tag;
    }

    /** @param lines gets every rank's PMI lines (rank, line) and returns a problem for the log, or null */
    void pmi(BiFunction<Integer, String, String> lines) {
        pmiLines = lines;
    }

    private InetSocketAddress address(int rank) {
        Placement p = ranks.get(rank - 1);
        return new InetSocketAddress(p.address(), p.port());
    }

    private static long key(int rank, int stream) {
        return ((long) rank << 8) | (stream & 0xff);
    }

    /** Takes one OUTPUT fragment from {@code source}; its stream is acknowledged by the next {@link #ack}. */
    void onOutput(InetSocketAddress source, V2HeaderFlyweight h) {
        long rank = h.rank();
        int stream = h.tag();
        if (rank < 1 || rank > ranks.size() || !address((int) rank).equals(source)
                || stream != V2HeaderDescriptor.STREAM_STDOUT && stream != V2HeaderDescriptor.STREAM_STDERR
                && stream != V2HeaderDescriptor.STREAM_PMI) {
            return;
        }
        long key = key((int) rank, stream);
        streams.computeIfAbsent(key, k -> new OutputStreamReceiver(linesOf((int) rank, stream), 0))
                .onFragment(h, signer.in, 0);
        toAck.add(key);
    }

    /** @return where the lines of one stream of a rank go: stdout, stderr (tagged), or the PMI fence */
    private OutputStreamReceiver.Lines linesOf(int rank, int stream) {
        return new OutputStreamReceiver.Lines() {
            @Override
            public void onLine(String line, boolean partial) {
                if (stream == V2HeaderDescriptor.STREAM_PMI) {
                    BiFunction<Integer, String, String> to = pmiLines;
                    String problem = to == null ? "PMI line of rank " + rank + " while the launcher serves no PMI"
                            : to.apply(rank, line);
                    if (problem != null) {
                        err.println("mpiproxy: " + problem);
                    }
                } else {
                    print(rank, stream == V2HeaderDescriptor.STREAM_STDERR, line);
                }
            }

            @Override
            public void onDropped(long lines) {
                print(rank, stream == V2HeaderDescriptor.STREAM_STDERR, "[mpiproxy: " + lines + " lines dropped: the"
                        + " launcher acknowledged no output for too long]");
            }
        };
    }

    /** Acknowledges every stream that took output since the last acknowledgement, to its rank's node. */
    void ack() throws IOException {
        for (long key : toAck) {
            int rank = (int) (key >>> 8);
            int stream = (int) (key & 0xff);
            long next = streams.get(key).next();
            InetSocketAddress node = address(rank);
            output.send(signer.request(node, OP_OUTPUT, jobId, rank, 0, a -> a.tag(stream).ack(next), null), node);
        }
        toAck.clear();
    }

    private void print(int rank, boolean stderr, String line) {
        PrintStream to = stderr ? err : out;
        synchronized (to) {
            to.println(tag ? "[" + rank + "] " + line : line);
            to.flush();
        }
    }
}
