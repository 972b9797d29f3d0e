package org.mpiproxy.examples;

/**
 * The work split of {@link MpiPrime}, exactly as FreeNOS's mpiprime slices it, and a correct
 * segmented sieve for one slice.
 * <p>
 * With W = world size (rank 0 included) and n = the number: if n % W != 0 then
 * n = n + W - (n % W); root = floor(sqrt(n)); per = (n - root) / W; rank r owns
 * [root + r*per, root + (r+1)*per) and sends exactly {@code per} flags. Rank 0 also covers
 * [2, root) and the rest [root + W*per, number) that integer division leaves out.
 *
 * @param number    the user's number: primes below it are wanted
 * @param worldSize W, ranks including rank 0
 * @param padded    n rounded up to a multiple of W
 * @param root      floor(sqrt(padded))
 * @param per       numbers per rank
 */
record PrimeSlices(long number, int worldSize, long padded, long root, long per) {

    /** Largest accepted number: keeps every slice within one Java array. */
    static final long MAX_NUMBER = 2_000_000_000L;

    /**
     * @param number    the user's number, 0..{@link #MAX_NUMBER}
     * @param worldSize the world size, &gt;= 1
     * @return the slicing
     */
    static PrimeSlices of(long number, int worldSize) {
        if (number < 0 || number > MAX_NUMBER || worldSize < 1) {
            throw new IllegalArgumentException("number=" + number + " worldSize=" + worldSize);
        }
        long n = number % worldSize != 0 ? number + worldSize - number % worldSize : number;
        long root = isqrt(n);
        return new PrimeSlices(number, worldSize, n, root, (n - root) / worldSize);
    }

    /** @return the first number of rank {@code r}'s slice */
    long start(int rank) {
        return root + rank * per;
    }

    /** @return one past the last number of rank {@code r}'s slice */
    long end(int rank) {
        return start(rank) + per;
    }

    /** @return the first number no rank's slice covers */
    long uncoveredStart() {
        return root + worldSize * per;
    }

    /** @return rank {@code r}'s flags: exactly {@link #per()} of them */
    byte[] markSlice(int rank) {
        return mark(start(rank), end(rank));
    }

    /**
     * A segmented sieve of Eratosthenes over [from, to), striking multiples of every prime up to
     * sqrt(to - 1).
     *
     * @return flag j = 1 when from + j is prime, else 0
     */
    static byte[] mark(long from, long to) {
        if (to <= from) {
            return new byte[0];
        }
        byte[] flags = new byte[Math.toIntExact(to - from)];
        java.util.Arrays.fill(flags, (byte) 1);
        for (long k = from; k < Math.min(to, 2); k++) {
            flags[(int) (k - from)] = 0;
        }
        int limit = (int) isqrt(to - 1);
        boolean[] composite = new boolean[limit + 1];
        for (int p = 2; p <= limit; p++) {
            if (composite[p]) {
                continue;
            }
            for (long m = (long) p * p; m <= limit; m += p) {
                composite[(int) m] = true;
            }
            long first = Math.max((long) p * p, (from + p - 1) / p * p);
            for (long m = first; m < to; m += p) {
                flags[(int) (m - from)] = 0;
            }
        }
        return flags;
    }

    /** @return floor(sqrt(n)) for n &gt;= 0, exact */
    static long isqrt(long n) {
        long r = (long) Math.sqrt((double) n);
        while (r * r > n) {
            r--;
        }
        while ((r + 1) * (r + 1) <= n) {
            r++;
        }
        return r;
    }
}
