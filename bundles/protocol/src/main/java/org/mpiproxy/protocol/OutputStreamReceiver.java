package org.mpiproxy.protocol;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.TreeMap;

/**
 * The host's side of one OUTPUT stream of a rank (docs/protocol-v2.md 5.5): takes its fragments in
 * sequence, keeps a few that arrive after a gap until the missing ones come again, joins the
 * fragments of a line and hands whole lines on, with the count of lines the proxy dropped
 * (carried in each fragment's {@code ack}). {@link #next()} is what the host acknowledges.
 * Not thread-safe.
 */
public final class OutputStreamReceiver {

    /** Fragments kept after a gap at most (the proxy's window is smaller). */
    public static final int EARLY_MAX = 256;

    /** Where the lines of a stream go. */
    public interface Lines {
        /**
         * @param line    a whole line without its newline
         * @param partial the rank's last line, cut off without a newline
         */
        void onLine(String line, boolean partial);

        /** @param lines lines the proxy dropped since the last report (its host acknowledged nothing for too long) */
        void onDropped(long lines);
    }

    private record Fragment(byte[] text, boolean endOfLine, boolean partial, long dropped) {
    }

    private final Lines lines;
    private long next;
    private long dropped;
    private final ByteArrayOutputStream line = new ByteArrayOutputStream();
    private final TreeMap<Long, Fragment> early = new TreeMap<>();

    /**
     * @param lines where whole lines go
     * @param first the first sequence expected; -1 to start at the first fragment that arrives (a
     *              host that joins a stream whose beginning someone else acknowledged)
     */
    public OutputStreamReceiver(Lines lines, long first) {
        this.lines = lines;
        this.next = first;
    }

    /** @return the next sequence expected: every fragment before it was taken; what the host acknowledges */
    public long next() {
        return Math.max(next, 0);
    }

    /**
     * Takes one OUTPUT fragment.
     *
     * @param header the fragment's verified header
     * @param buffer the datagram, the payload at {@link V2HeaderDescriptor#HEADER_LENGTH} after the header's offset
     * @param offset where the header starts
     */
    public void onFragment(V2HeaderFlyweight header, ByteBuffer buffer, int offset) {
        byte[] text = new byte[header.payloadLength()];
        buffer.get(offset + V2HeaderDescriptor.HEADER_LENGTH, text);
        onFragment(header.sequence(), text, (header.flags() & V2HeaderDescriptor.FLAG_END_OF_MESSAGE) != 0,
                (header.argument() & V2HeaderDescriptor.OUTPUT_PARTIAL) != 0, header.ack());
    }

    /**
     * Takes one OUTPUT fragment.
     *
     * @param sequence  its sequence number
     * @param text      its bytes
     * @param endOfLine whether it ends a line
     * @param partial   whether that line is the rank's last, cut off without a newline
     * @param dropped   lines of the stream the proxy dropped so far
     */
    public void onFragment(long sequence, byte[] text, boolean endOfLine, boolean partial, long dropped) {
        if (next < 0) {
            next = sequence;
        }
        if (sequence < next) {
            // a duplicate: our acknowledgement was lost or late; the one sent next repairs it
            return;
        }
        Fragment fragment = new Fragment(text, endOfLine, partial, dropped);
        if (sequence > next) {
            if (early.size() < EARLY_MAX) {
                early.putIfAbsent(sequence, fragment);
            }
            return;
        }
        while (fragment != null) {
            next++;
            take(fragment);
            fragment = early.isEmpty() ? null : early.remove(next);
        }
        early.headMap(next).clear();
    }

    private void take(Fragment fragment) {
        if (fragment.dropped() > dropped) {
            long count = fragment.dropped() - dropped;
            dropped = fragment.dropped();
            lines.onDropped(count);
        }
        byte[] bytes = fragment.text();
        if (!fragment.endOfLine() || line.size() > 0) {
            line.write(bytes, 0, bytes.length);
            if (!fragment.endOfLine()) {
                return;
            }
            bytes = line.toByteArray();
            line.reset();
        }
        lines.onLine(new String(bytes, StandardCharsets.UTF_8), fragment.partial());
    }
}
