package org.mpiproxy.examples;

import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import org.mpiproxy.mpi.Message;
import org.mpiproxy.mpi.Mpi;
import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.protocol.MpiDatatype;

/**
 * {@code mpiecho HOSTFILE [BYTES]}: every rank 1..W-1 sends each message it receives back to
 * rank 0 unchanged (same datatype, elements and tag) until the stop message ({@link #isStop}).
 * Rank 0 is a self-check: it sends each rank the messages of {@link #plan} one at a time,
 * checks every element of each echo and prints one line per rank,
 * {@code rank <r>: <n> messages echoed, <bytes> bytes, every element checked, in <ms> ms} or
 * {@code rank <r>: message <k> (<what>): <difference>}; then it sends every rank the stop message.
 * <p>
 * Exit status: 0 when every echo was right, 1 on a wrong echo, a failed MPI call or a rank
 * exiting non-zero, 2 for bad usage.
 */
public final class MpiEcho {

    /** The stop message's elements: MPI_CHAR, tag 0, exactly these four bytes. */
    static final byte[] STOP = "STOP".getBytes(StandardCharsets.US_ASCII);
    /** Size of rank 0's large message when BYTES is not given. */
    static final int DEFAULT_BYTES = 1 << 20;
    /** Largest BYTES: the proxy's default maximum message size (v2.max.message.bytes). */
    static final int MAX_BYTES = 1 << 30;
    /** Bytes of the plan's small messages: several v2 fragments and v1 datagrams. */
    static final int SMALL_BYTES = 3000;
    /**
     * Over v1, which does not retransmit, rank 0 round-trips its large message this many bytes
     * at a time, so that no burst of datagrams overflows a socket buffer.
     */
    static final int V1_SLICE_BYTES = 64 * 1024;
    /** Tag of the large message over v2. */
    static final int LARGE_TAG = 1000;

    private MpiEcho() {
    }

    /**
     * @param args {@code HOSTFILE [BYTES]} on rank 0; {@code --slave ...} when started by a proxy
     */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length > 0 && (args[0].equals("--help") || args[0].equals("-h"))) {
            usage(out);
            return 0;
        }
        // under 'mpiproxy run' (and on ranks it started) the world comes from the environment: no hostfile argument
        boolean hostfileNeeded = !Mpi.launched();
        List<String> own = Mpi.programArguments(args);
        int bytes = own.isEmpty() ? DEFAULT_BYTES : own.size() == 1 ? parse(own.get(0)) : -1;
        if (args.length == 0 && hostfileNeeded || bytes < 0) {
            usage(err);
            return 2;
        }
        Mpi mpi;
        try {
            mpi = Mpi.init(args);
        } catch (MpiException e) {
            err.println("mpiecho: " + e.getMessage());
            return 1;
        }
        int status;
        try {
            status = mpi.rank() == 0 ? check(mpi, bytes, out) : echo(mpi, out);
        } catch (MpiException e) {
            out.flush();
            err.println("mpiecho: " + e.getMessage());
            status = 1;
        } finally {
            mpi.close();
        }
        for (int s : mpi.exitStatuses()) {
            status = s != 0 ? 1 : status;
        }
        return status;
    }

    /** A rank: sends back every message until the stop message. */
    private static int echo(Mpi mpi, PrintStream out) {
        long messages = 0;
        long bytes = 0;
        while (true) {
            Message m = mpi.recv(0, Mpi.ANY_TAG);
            if (isStop(m)) {
                break;
            }
            mpi.send(m, 0);
            messages++;
            bytes += m.length();
        }
        // over v2 this line reaches rank 0's output as "[rank] ..."; over v1 it stays in the node's log
        out.printf("rank %d of %d: echoed %d messages, %d bytes%n", mpi.rank(), mpi.size(), messages, bytes);
        out.flush();
        return 0;
    }

    /** Rank 0: the plan to every rank, each echo checked, then the stop message to every rank. */
    private static int check(Mpi mpi, int bytes, PrintStream out) {
        if (mpi.size() == 1) {
            out.println("mpiecho: the hostfile names no ranks");
        }
        int status = 0;
        for (int r = 1; r < mpi.size(); r++) {
            List<Message> plan = plan(mpi.hasTags(), bytes, r);
            long started = System.nanoTime();
            long total = 0;
            String wrong = null;
            int k = 0;
            while (wrong == null && k < plan.size()) {
                Message m = plan.get(k++);
                wrong = mpi.hasTags() ? difference(m, roundTrip(mpi, m, r)) : roundTripV1(mpi, m, r);
                total += m.length();
            }
            if (wrong == null) {
                out.printf("rank %d: %d messages echoed, %d bytes, every element checked, in %d ms%n", r, plan.size(),
                        total, (System.nanoTime() - started) / 1_000_000);
            } else {
                out.printf("rank %d: message %d (%s): %s%n", r, k, plan.get(k - 1), wrong);
                status = 1;
            }
            out.flush();
        }
        for (int r = 1; r < mpi.size(); r++) {
            mpi.send(stop(), r);
        }
        return status;
    }

    private static Message roundTrip(Mpi mpi, Message m, int rank) {
        mpi.send(m, rank);
        return mpi.recv(rank, m.tag());
    }

    /** v1 keeps no message boundaries: the elements go and come back a slice at a time. */
    private static String roundTripV1(Mpi mpi, Message m, int rank) {
        int size = MpiDatatype.sizeOf(m.datatype());
        int perSlice = Math.max(1, V1_SLICE_BYTES / size) * size;
        byte[] all = m.toByteArray();
        for (int done = 0; done < all.length; done += perSlice) {
            byte[] slice = Arrays.copyOfRange(all, done, Math.min(all.length, done + perSlice));
            Message sent = Message.of(m.datatype(), 0, slice);
            mpi.send(sent, rank);
            ByteBuffer back = ByteBuffer.allocate(slice.length);
            mpi.recvElements(back, sent.count(), m.datatype(), rank);
            String wrong = difference(sent, Message.of(m.datatype(), 0, back.array()));
            if (wrong != null) {
                return "from element " + done / size + " on: " + wrong;
            }
        }
        return null;
    }

    /**
     * The messages rank 0 sends one rank, in order: for each datatype (v2: codes 0..12, v1:
     * 0..7) one of a single element and one of {@value #SMALL_BYTES} bytes, then one of
     * {@code bytes} bytes (rounded down to whole elements, at least one) of MPI_DOUBLE (v1:
     * MPI_LONG, v1 has no MPI_DOUBLE). Over v2 the single elements have tag = datatype code,
     * the small ones 100 + code and the large one {@value #LARGE_TAG}; over v1 every tag is 0.
     * The elements are pseudo-random, seeded by rank and position, so every rank gets its own.
     *
     * @param tags  whether the protocol keeps tags (v2)
     * @param bytes size of the large message
     * @param rank  the rank the plan is for
     * @return the messages
     */
    static List<Message> plan(boolean tags, int bytes, int rank) {
        int lastCode = tags ? MpiDatatype.values().length - 1 : MpiDatatype.V1_MAX_CODE;
        Random random = new Random(rank * 7919L);
        List<Message> plan = new ArrayList<>();
        for (int code = 0; code <= lastCode; code++) {
            int size = MpiDatatype.sizeOf(code);
            plan.add(Message.of(code, tags ? code : 0, bytes(random, size)));
            plan.add(Message.of(code, tags ? 100 + code : 0, bytes(random, SMALL_BYTES / size * size)));
        }
        MpiDatatype large = tags ? MpiDatatype.DOUBLE : MpiDatatype.LONG;
        int length = Math.max(1, bytes / large.size()) * large.size();
        plan.add(Message.of(large.code(), tags ? LARGE_TAG : 0, bytes(random, length)));
        return plan;
    }

    private static byte[] bytes(Random random, int length) {
        byte[] b = new byte[length];
        random.nextBytes(b);
        return b;
    }

    /**
     * @return {@code null} when {@code back} has the datatype, tag and elements of
     *         {@code sent}; else what differs first, e.g.
     *         {@code element 5 of MPI_SHORT: sent 0x0102, got 0x0103}
     */
    static String difference(Message sent, Message back) {
        if (back.datatype() != sent.datatype()) {
            return "came back as MPI_" + MpiDatatype.ofCode(back.datatype());
        }
        if (back.tag() != sent.tag()) {
            return "came back with tag " + back.tag();
        }
        if (back.count() != sent.count()) {
            return "came back with " + back.count() + " elements";
        }
        ByteBuffer a = sent.elements();
        ByteBuffer b = back.elements();
        int mismatch = a.mismatch(b);
        if (mismatch < 0) {
            return null;
        }
        int size = MpiDatatype.sizeOf(sent.datatype());
        int element = mismatch / size;
        return "element " + element + " of MPI_" + MpiDatatype.ofCode(sent.datatype()) + ": sent 0x"
                + hex(a, element * size, size) + ", got 0x" + hex(b, element * size, size);
    }

    /** An element's value as hexadecimal digits, most significant first (elements are little-endian). */
    private static String hex(ByteBuffer b, int offset, int size) {
        StringBuilder s = new StringBuilder();
        for (int i = size - 1; i >= 0; i--) {
            s.append(String.format("%02x", b.get(offset + i) & 0xff));
        }
        return s.toString();
    }

    /** @return the stop message: 4 MPI_CHAR elements {@code STOP}, tag 0 */
    static Message stop() {
        return Message.of(MpiDatatype.CHAR.code(), 0, STOP);
    }

    /** @return whether {@code m} is the stop message: exactly 4 MPI_CHAR {@code STOP} with tag 0 */
    static boolean isStop(Message m) {
        return m.datatype() == MpiDatatype.CHAR.code() && m.tag() == 0 && m.length() == STOP.length
                && m.elements().equals(ByteBuffer.wrap(STOP));
    }

    private static int parse(String text) {
        try {
            int n = Integer.parseInt(text);
            return n >= 1 && n <= MAX_BYTES ? n : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static void usage(PrintStream out) {
        out.println("usage: mpiecho HOSTFILE [BYTES]    (or: mpiproxy run [options] mpiecho [BYTES])");
        out.println("  Every rank named in HOSTFILE (one <ipv4>:<port>:<coreId> per line) sends back each message it");
        out.println("  receives; rank 0 checks the echo of messages of every datatype and one of BYTES (1.."
                + MAX_BYTES + ", default " + DEFAULT_BYTES + ").");
    }
}
