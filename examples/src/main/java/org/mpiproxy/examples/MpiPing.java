package org.mpiproxy.examples;

import java.io.PrintStream;

import org.mpiproxy.mpi.Mpi;
import org.mpiproxy.mpi.MpiException;

/**
 * {@code mpiping HOSTFILE}: rank 0 sends the int {@code 0xaabbccdd} to each rank in turn and
 * expects {@code 0x12345678} back, like FreeNOS's mpiping. Rank 0 prints one line per rank,
 * {@code rank <r>: pong 0x12345678 in <micros> us} or
 * {@code rank <r>: wrong pong 0x........, expected 0x12345678}.
 * <p>
 * Exit status: 0 when every rank answered correctly, 1 on a wrong pong, a failed MPI call or a
 * rank exiting non-zero, 2 for bad usage.
 */
public final class MpiPing {

    /** What rank 0 sends. */
    static final int PING = 0xaabbccdd;
    /** What every rank answers. */
    static final int PONG = 0x12345678;

    private MpiPing() {
    }

    /**
     * @param args {@code HOSTFILE} on rank 0; {@code --slave ...} when started by a proxy
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
        if (args.length == 0 && hostfileNeeded || !Mpi.programArguments(args).isEmpty()) {
            usage(err);
            return 2;
        }
        Mpi mpi;
        try {
            mpi = Mpi.init(args);
        } catch (MpiException e) {
            err.println("mpiping: " + e.getMessage());
            return 1;
        }
        int status;
        try {
            status = mpi.rank() == 0 ? ping(mpi, out) : pong(mpi, out, err);
        } catch (MpiException e) {
            err.println("mpiping: " + e.getMessage());
            status = 1;
        } finally {
            mpi.close();
        }
        for (int s : mpi.exitStatuses()) {
            status = s != 0 ? 1 : status;
        }
        return status;
    }

    private static int ping(Mpi mpi, PrintStream out) {
        int status = 0;
        int[] word = new int[1];
        if (mpi.size() == 1) {
            out.println("mpiping: the hostfile names no ranks");
        }
        for (int r = 1; r < mpi.size(); r++) {
            long started = System.nanoTime();
            mpi.send(new int[] {PING}, 0, 1, r);
            mpi.recv(word, 0, 1, r);
            long micros = (System.nanoTime() - started) / 1000;
            if (word[0] == PONG) {
                out.printf("rank %d: pong 0x%08x in %d us%n", r, word[0], micros);
            } else {
                out.printf("rank %d: wrong pong 0x%08x, expected 0x%08x%n", r, word[0], PONG);
                status = 1;
            }
        }
        return status;
    }

    private static int pong(Mpi mpi, PrintStream out, PrintStream err) {
        int[] word = new int[1];
        mpi.recv(word, 0, 1, 0);
        int status = 0;
        if (word[0] != PING) {
            err.printf("mpiping: rank %d: wrong ping 0x%08x, expected 0x%08x%n", mpi.rank(), word[0], PING);
            status = 1;
        }
        mpi.send(new int[] {PONG}, 0, 1, 0);
        // over v2 this line reaches rank 0's output as "[rank] ..."; over v1 it stays in the node's log
        out.printf("rank %d of %d: pong sent%n", mpi.rank(), mpi.size());
        out.flush();
        return status;
    }

    private static void usage(PrintStream out) {
        out.println("usage: mpiping HOSTFILE    (or: mpiproxy run [options] mpiping)");
        out.println("  Rank 0 pings every rank named in HOSTFILE (one <ipv4>:<port>:<coreId> per line).");
    }
}
