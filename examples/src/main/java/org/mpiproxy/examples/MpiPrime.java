package org.mpiproxy.examples;

import java.io.BufferedWriter;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.mpiproxy.mpi.Mpi;
import org.mpiproxy.mpi.MpiException;

/**
 * {@code mpiprime HOSTFILE NUMBER}: a parallel sieve of Eratosthenes, like FreeNOS's mpiprime.
 * <p>
 * Every rank marks its slice of [sqrt(n), n) (see {@link PrimeSlices} for the exact split)
 * and ranks 1..W-1 send their flags to rank 0 as {@code MPI_UNSIGNED_CHAR}. Rank 0 prints
 * every prime p with 2 &lt;= p &lt; NUMBER, one per line in ascending order, then the line
 * {@code <count> primes below <NUMBER>}. Unlike the original, only primes are flagged (49 is
 * not a prime), and numbers below NUMBER that the integer division leaves out of every slice
 * are sieved by rank 0.
 * <p>
 * Exit status: 0 on success, 1 when an MPI call fails or a rank exits non-zero, 2 for bad usage.
 */
public final class MpiPrime {

    private MpiPrime() {
    }

    /**
     * @param args {@code HOSTFILE NUMBER} on rank 0; {@code --slave ...} when started by a proxy
     */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream stdout, PrintStream stderr) {
        if (args.length > 0 && (args[0].equals("--help") || args[0].equals("-h"))) {
            usage(stdout);
            return 0;
        }
        List<String> own = Mpi.programArguments(args);
        long number = own.size() == 1 ? parse(own.get(0)) : -1;
        if (args.length == 0 || number < 0) {
            usage(stderr);
            return 2;
        }
        PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(stdout, StandardCharsets.UTF_8), 1 << 16));
        Mpi mpi;
        try {
            mpi = Mpi.init(args);
        } catch (MpiException e) {
            stderr.println("mpiprime: " + e.getMessage());
            return 1;
        }
        int status;
        try {
            sieve(mpi, number, out);
            status = 0;
        } catch (MpiException e) {
            out.flush();
            stderr.println("mpiprime: " + e.getMessage());
            status = 1;
        } finally {
            mpi.close();
        }
        for (int s : mpi.exitStatuses()) {
            status = s != 0 ? 1 : status;
        }
        return status;
    }

    private static void sieve(Mpi mpi, long number, PrintWriter out) {
        PrimeSlices slices = PrimeSlices.of(number, mpi.size());
        if (mpi.rank() != 0) {
            byte[] flags = slices.markSlice(mpi.rank());
            mpi.send(flags, 0, flags.length, 0);
            return;
        }
        long count = print(0, PrimeSlices.mark(0, slices.root()), number, out);
        count += print(slices.start(0), slices.markSlice(0), number, out);
        byte[] flags = new byte[(int) slices.per()];
        for (int r = 1; r < mpi.size(); r++) {
            mpi.recv(flags, 0, flags.length, r);
            count += print(slices.start(r), flags, number, out);
        }
        long rest = slices.uncoveredStart();
        count += print(rest, PrimeSlices.mark(rest, number), number, out);
        out.println(count + " primes below " + number);
        out.flush();
    }

    /**
     * Prints the flagged numbers below {@code below}, one per line.
     *
     * @param first the number of flag 0
     * @return how many were printed
     */
    static long print(long first, byte[] flags, long below, PrintWriter out) {
        long count = 0;
        for (int j = 0; j < flags.length && first + j < below; j++) {
            if (flags[j] != 0 && first + j >= 2) {
                out.println(first + j);
                count++;
            }
        }
        return count;
    }

    private static long parse(String text) {
        try {
            long n = Long.parseLong(text);
            return n <= PrimeSlices.MAX_NUMBER ? n : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static void usage(PrintStream out) {
        out.println("usage: mpiprime HOSTFILE NUMBER    (or: mpiproxy run [options] mpiprime NUMBER)");
        out.println("  Prints the primes below NUMBER (0.." + PrimeSlices.MAX_NUMBER
                + "), one per line, then '<count> primes below NUMBER'.");
        out.println("  The ranks named in HOSTFILE (one <ipv4>:<port>:<coreId> per line) each sieve a slice.");
    }
}
