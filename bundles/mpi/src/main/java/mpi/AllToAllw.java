package mpi;

import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.ShortBuffer;

import org.mpiproxy.mpi.internal.engine.Collectives;
import org.mpiproxy.mpi.internal.engine.Communicator;
import org.mpiproxy.mpi.internal.engine.Kind;
import org.mpiproxy.mpi.internal.engine.NonBlockingCollectives;
import org.mpiproxy.mpi.internal.engine.Schedule;

/**
 * One call of {@link Comm#allToAllw} or {@link Comm#iAllToAllw}: a datatype and a byte
 * displacement per peer on each side. The elements for each peer are packed at the call (so the
 * send buffer is free again at once) into one buffer, exchanged as the all-to-all of bytes, and
 * unpacked per peer into the receive buffer at its displacement: at once, or when the request
 * completes. Displacements over a typed NIO buffer must fall on its elements.
 */
final class AllToAllw {

    private final Communicator c;
    private final String call;
    private final Buffer recvBuf;
    private final Datatype[] recvTypes;
    private final int[] recvCount;
    private final int[] rDispls;
    private final ByteBuffer send;
    private final ByteBuffer recv;
    private final int[][] out;
    private final int[][] in;

    AllToAllw(Communicator c, String call, Buffer sendBuf, int[] sendCount, int[] sDispls, Datatype[] sendTypes,
              Buffer recvBuf, int[] recvCount, int[] rDispls, Datatype[] recvTypes) throws MPIException {
        this.c = c;
        this.call = call;
        int n = c.size();
        this.out = layout(sendBuf, sendCount, sDispls, sendTypes, n);
        this.in = layout(recvBuf, recvCount, rDispls, recvTypes, n);
        this.recvBuf = recvBuf;
        this.recvTypes = recvTypes.clone();
        this.recvCount = recvCount.clone();
        this.rDispls = rDispls.clone();
        this.send = Comm.heap(out[2][0]);
        for (int i = 0; i < n; i++) {
            Buffers.pack(window(sendBuf, sDispls[i]), 0, sendCount[i], sendTypes[i], send, out[1][i]);
        }
        this.recv = Comm.heap(in[2][0]);
    }

    /** @return {packed bytes per peer, their offsets, {total}}, every peer's elements checked against the buffer */
    private int[][] layout(Buffer buf, int[] counts, int[] displs, Datatype[] types, int n) throws MPIException {
        if (counts == null || displs == null || types == null || counts.length < n || displs.length < n
                || types.length < n) {
            throw new MPIException(MPI.ERR_ARG, call + ": counts, displacements and types need " + n + " entries each");
        }
        int[] bytes = new int[n];
        int[] at = new int[n];
        int total = 0;
        for (int i = 0; i < n; i++) {
            if (counts[i] < 0) {
                throw new MPIException(MPI.ERR_COUNT, call + ": count " + counts[i] + " for rank " + i + " is negative");
            }
            if (counts[i] > 0) {
                Buffers.check(window(buf, displs[i]), 0, counts[i], types[i]);
            }
            bytes[i] = counts[i] * (types[i] == null ? 0 : types[i].packedSize);
            at[i] = total;
            total += bytes[i];
        }
        return new int[][] {bytes, at, {total}};
    }

    /** @return the buffer from byte {@code displ} on */
    private Buffer window(Buffer buf, int displ) throws MPIException {
        if (buf == null || displ == 0) {
            return buf;
        }
        int size = buf instanceof ByteBuffer ? 1 : buf instanceof CharBuffer || buf instanceof ShortBuffer ? 2
                : buf instanceof IntBuffer || buf instanceof FloatBuffer ? 4 : 8;
        if (displ < 0 || displ % size != 0 || displ / size > buf.capacity()) {
            throw new MPIException(MPI.ERR_ARG, call + ": displacement " + displ + " bytes does not fall on an element of "
                    + buf.getClass().getSimpleName() + "[" + buf.capacity() + "]");
        }
        Buffer w = buf.duplicate().clear().position(displ / size).slice();
        return buf instanceof ByteBuffer b ? ((ByteBuffer) w).order(b.order()) : w;
    }

    void run() throws MPIException {
        Collectives.allToAllv(c, send, out[0], out[1], recv, in[0], in[1], Kind.PACKED);
        unpack();
    }

    Request start(Comm comm) {
        Schedule s = NonBlockingCollectives.allToAllv(c, call, send, out[0], out[1], recv, in[0], in[1], Kind.PACKED);
        Request r = new Request(comm, s);
        s.start(() -> {
            try {
                unpack();
            } catch (MPIException e) {
                throw new IllegalStateException(e.getMessage(), e);
            }
        });
        return r;
    }

    private void unpack() throws MPIException {
        for (int i = 0; i < in[0].length; i++) {
            if (recvCount[i] > 0) {
                Buffers.unpack(recv, in[1][i], in[0][i], window(recvBuf, rDispls[i]), 0, recvTypes[i]);
            }
        }
    }
}
