package mpi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * Operations of the program's own: a 2x2 integer matrix product, not commutative, in every
 * reduction and its non-blocking form, on four ranks and on three (where the recursive doubling
 * pairs ranks up first), each result checked against the product taken here in rank order; a
 * commutative one written against the buffer form; {@code allToAllw} with a type per peer.
 */
class UserOpTest {

    /** Two matrices per rank. */
    static final int COUNT = 2;

    /** Rank r's matrix k, row-major: [[r + k + 1, 1], [r, 2]]. */
    static int[] matrix(int r, int k) {
        return new int[] {r + k + 1, 1, r, 2};
    }

    static int[] mine(int r) {
        int[] m = new int[4 * COUNT];
        for (int k = 0; k < COUNT; k++) {
            System.arraycopy(matrix(r, k), 0, m, 4 * k, 4);
        }
        return m;
    }

    static int[] times(int[] a, int[] b) {
        return new int[] {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
            a[2] * b[1] + a[3] * b[3]};
    }

    /** @return the product of ranks from..to's matrices, in rank order, as the programs print it */
    static String product(int from, int to) {
        int[] all = new int[4 * COUNT];
        for (int k = 0; k < COUNT; k++) {
            int[] p = matrix(from, k);
            for (int r = from + 1; r <= to; r++) {
                p = times(p, matrix(r, k));
            }
            System.arraycopy(p, 0, all, 4 * k, 4);
        }
        return Arrays.toString(all);
    }

    /** {@code inOut = in x inOut} for 2x2 int matrices, through the array form. */
    public static final class MatrixProduct extends UserFunction {
        @Override
        public void call(Object inVec, Object inOutVec, int count, Datatype datatype) {
            int[] in = (int[]) inVec;
            int[] inOut = (int[]) inOutVec;
            for (int k = 0; k < count; k++) {
                int[] p = times(Arrays.copyOfRange(in, 4 * k, 4 * k + 4), Arrays.copyOfRange(inOut, 4 * k, 4 * k + 4));
                System.arraycopy(p, 0, inOut, 4 * k, 4);
            }
        }
    }

    /** The larger absolute value, through the buffer form. */
    public static final class AbsMax extends UserFunction {
        @Override
        public void call(ByteBuffer in, ByteBuffer inOut, int count, Datatype datatype) {
            IntBuffer a = in.asIntBuffer();
            IntBuffer b = inOut.asIntBuffer();
            for (int i = 0; i < count; i++) {
                if (Math.abs(a.get(i)) > Math.abs(b.get(i))) {
                    b.put(i, a.get(i));
                }
            }
        }
    }

    static final class Programs {

        static Object products(Intracomm world) throws MPIException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            int r = world.getRank();
            int n = world.getSize();
            Datatype matrix = Datatype.createContiguous(4, MPI.INT);
            matrix.commit();
            Op product = new Op(new MatrixProduct(), false);
            List<Object> out = new ArrayList<>();
            out.add(product.isCommutative());
            for (int root : new int[] {0, n - 2}) {
                int[] got = new int[4 * COUNT];
                world.reduce(mine(r), got, COUNT, matrix, product, root);
                out.add(r == root ? Arrays.toString(got) : "-");
            }
            int[] all = new int[4 * COUNT];
            world.allReduce(mine(r), all, COUNT, matrix, product);
            out.add(Arrays.toString(all));
            int[] scan = new int[4 * COUNT];
            world.scan(mine(r), scan, COUNT, matrix, product);
            out.add(Arrays.toString(scan));
            int[] ex = new int[4 * COUNT];
            world.exScan(mine(r), ex, COUNT, matrix, product);
            out.add(r == 0 ? "-" : Arrays.toString(ex));
            // rank i gets the product of every rank's matrix in slot i (matrix i % 2)
            int[] part = new int[4];
            int[] spread = new int[4 * n];
            for (int i = 0; i < n; i++) {
                System.arraycopy(matrix(r, i % 2), 0, spread, 4 * i, 4);
            }
            world.reduceScatter(spread, part, new int[] {1, 1, 1, 1, 1}, matrix, product);
            out.add(Arrays.toString(part));
            IntBuffer iReduced = IntBuffer.allocate(4 * COUNT);
            IntBuffer iAll = IntBuffer.allocate(4 * COUNT);
            IntBuffer iScanned = IntBuffer.allocate(4 * COUNT);
            IntBuffer iEx = IntBuffer.allocate(4 * COUNT);
            Request[] started = {
                world.iReduce(IntBuffer.wrap(mine(r)), iReduced, COUNT, matrix, product, n - 1),
                world.iAllReduce(IntBuffer.wrap(mine(r)), iAll, COUNT, matrix, product),
                world.iScan(IntBuffer.wrap(mine(r)), iScanned, COUNT, matrix, product),
                world.iExScan(IntBuffer.wrap(mine(r)), iEx, COUNT, matrix, product),
            };
            Request.waitAll(started);
            out.add(r == n - 1 ? Arrays.toString(iReduced.array()) : "-");
            out.add(Arrays.toString(iAll.array()));
            out.add(Arrays.toString(iScanned.array()));
            out.add(r == 0 ? "-" : Arrays.toString(iEx.array()));
            int[] local = matrix(9, 0);
            Comm.reduceLocal(matrix(r, 0), local, 1, matrix, product);
            out.add(Arrays.toString(local));
            Op absMax = new Op(new AbsMax(), true);
            int[] m = new int[1];
            world.allReduce(new int[] {r % 2 == 0 ? -r : r}, m, 1, MPI.INT, absMax);
            out.add(m[0]);
            product.free();
            out.add(product.isNull());
            try {
                world.allReduce(mine(r), all, COUNT, matrix, product);
                out.add("reduced with a freed operation");
            } catch (MPIException e) {
                out.add(e.getErrorClass());
            }
            return out;
        }

        /** Rank r sends i + 1 ints (r * 10 + i) to rank i, at byte 16 * i, as MPI.INT, and receives them as bytes. */
        static Object allToAllw(Intracomm world) throws MPIException {
            int r = world.getRank();
            int n = world.getSize();
            IntBuffer send = IntBuffer.allocate(4 * n);
            int[] sendCount = new int[n];
            int[] sDispls = new int[n];
            Datatype[] sendTypes = new Datatype[n];
            int[] recvCount = new int[n];
            int[] rDispls = new int[n];
            Datatype[] recvTypes = new Datatype[n];
            for (int i = 0; i < n; i++) {
                sendCount[i] = i + 1;
                sDispls[i] = 16 * i;
                sendTypes[i] = MPI.INT;
                for (int k = 0; k <= i; k++) {
                    send.put(4 * i + k, r * 10 + k);
                }
                recvCount[i] = 4 * (r + 1);
                rDispls[i] = 16 * i;
                recvTypes[i] = MPI.BYTE;
            }
            ByteBuffer recv = ByteBuffer.allocate(16 * n).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            world.allToAllw(send, sendCount, sDispls, sendTypes, recv, recvCount, rDispls, recvTypes);
            ByteBuffer again = ByteBuffer.allocate(16 * n).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            world.iAllToAllw(send, sendCount, sDispls, sendTypes, again, recvCount, rDispls, recvTypes).waitFor();
            List<Object> out = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int[] from = new int[r + 1];
                recv.asIntBuffer().get(4 * i, from);
                out.add(Arrays.toString(from) + (recv.equals(again) ? "" : " (iAllToAllw differs)"));
            }
            return out;
        }
    }

    private static void products(int n) throws Exception {
        List<Object> ranks = World.values(n, Programs.class, "products");
        for (int r = 0; r < n; r++) {
            int[] own = matrix(0, r % 2);
            for (int q = 1; q < n; q++) {
                own = times(own, matrix(q, r % 2));
            }
            String part = Arrays.toString(own);
            int biggest = 0;
            for (int q = 0; q < n; q++) {
                int v = q % 2 == 0 ? -q : q;
                biggest = Math.abs(v) > Math.abs(biggest) ? v : biggest;
            }
            List<Object> expected = List.of(false, r == 0 ? product(0, n - 1) : "-",
                    r == n - 2 ? product(0, n - 1) : "-", product(0, n - 1), product(0, r),
                    r == 0 ? "-" : product(0, r - 1), part, r == n - 1 ? product(0, n - 1) : "-", product(0, n - 1),
                    product(0, r), r == 0 ? "-" : product(0, r - 1), Arrays.toString(times(matrix(r, 0), matrix(9, 0))),
                    biggest, true, MPI.ERR_OP);
            assertEquals(expected, ranks.get(r), "rank " + r + " of " + n);
        }
    }

    @Test
    void shouldCombineANonCommutativeOperationInRankOrderOnFourRanks() throws Exception {
        products(4);
    }

    @Test
    void shouldCombineANonCommutativeOperationInRankOrderOnThreeRanks() throws Exception {
        products(3);
    }

    @Test
    void shouldExchangeWithATypeAndByteDisplacementPerPeer() throws Exception {
        int n = 3;
        List<Object> ranks = World.values(n, Programs.class, "allToAllw");
        for (int r = 0; r < n; r++) {
            List<Object> expected = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int[] from = new int[r + 1];
                for (int k = 0; k <= r; k++) {
                    from[k] = i * 10 + k;
                }
                expected.add(Arrays.toString(from));
            }
            assertEquals(expected, ranks.get(r), "rank " + r);
        }
    }
}
