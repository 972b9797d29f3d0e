package org.mpiproxy.benchmarks.mpi;

import java.nio.ByteBuffer;

import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import mpi.Request;

/**
 * 64 KiB messages from rank A to rank B, 64 in flight (non-blocking), each window acknowledged by
 * one int; written only against the {@code mpi} package, as {@code bandwidth.c} is against MPICH.
 * Rank 0 prints rank A's {@code bandwidth_MBps <message bytes per second / 10^6>}; the other ranks only
 * take part in the barrier.
 * Usage: Bandwidth [WINDOWS [A B]] (default 400 after WINDOWS/10 warm-up windows, ranks 0 and 1).
 */
public final class Bandwidth {

    static final int SIZE = 65536;
    static final int WINDOW = 64;

    private Bandwidth() {
    }

    public static void main(String[] args) throws MPIException {
        MPI.Init(args);
        Intracomm world = MPI.COMM_WORLD;
        int rank = world.getRank();
        int windows = args.length > 0 ? Integer.parseInt(args[0]) : 400;
        int a = args.length > 2 ? Integer.parseInt(args[1]) : 0;
        int b = args.length > 2 ? Integer.parseInt(args[2]) : 1;
        if (world.getSize() <= Math.max(a, b) || a == b) {
            System.err.println("Bandwidth: ranks " + a + " and " + b + " in a world of " + world.getSize());
            world.abort(2);
        }
        int warmup = windows / 10;
        ByteBuffer buffer = MPI.newByteBuffer(SIZE * WINDOW);
        for (int i = 0; i < SIZE * WINDOW; i++) {
            buffer.put(i, (byte) (rank == a ? 1 : 0));
        }
        ByteBuffer[] slots = new ByteBuffer[WINDOW];
        for (int i = 0; i < WINDOW; i++) {
            slots[i] = MPI.slice(buffer, i * SIZE);
        }
        Request[] requests = new Request[WINDOW];
        int[] ack = new int[1];
        double start = 0;
        for (int w = 0; w < warmup + windows; w++) {
            if (w == warmup) {
                world.barrier();
                start = MPI.wtime();
            }
            if (rank == a) {
                for (int i = 0; i < WINDOW; i++) {
                    requests[i] = world.iSend(slots[i], SIZE, MPI.BYTE, b, 1);
                }
                Request.waitAll(requests);
                world.recv(ack, 1, MPI.INT, b, 2);
            } else if (rank == b) {
                for (int i = 0; i < WINDOW; i++) {
                    requests[i] = world.iRecv(slots[i], SIZE, MPI.BYTE, a, 1);
                }
                Request.waitAll(requests);
                if (buffer.get(0) != 1 || buffer.get(SIZE * WINDOW - 1) != 1) {
                    System.err.println("Bandwidth: rank 1 received wrong bytes");
                    world.abort(3);
                }
                ack[0] = w;
                world.send(ack, 1, MPI.INT, a, 2);
            }
        }
        double elapsed = MPI.wtime() - start;
        double[] figure = {(double) SIZE * WINDOW * windows / elapsed / 1e6};
        PingPong.report(world, a, figure);
        if (rank == 0) {
            System.out.printf(java.util.Locale.ROOT, "bandwidth_MBps %.1f%n", figure[0]);
        }
        MPI.Finalize();
    }
}
