package org.mpiproxy.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

class PrimeSlicesTest {

    private static boolean isPrime(long k) {
        if (k < 2) {
            return false;
        }
        for (long d = 2; d * d <= k; d++) {
            if (k % d == 0) {
                return false;
            }
        }
        return true;
    }

    private static List<Long> primesBelow(long n) {
        List<Long> primes = new ArrayList<>();
        for (long k = 2; k < n; k++) {
            if (isPrime(k)) {
                primes.add(k);
            }
        }
        return primes;
    }

    @Test
    void shouldSliceExactlyAsTheOriginal() {
        PrimeSlices s = PrimeSlices.of(100, 3);
        assertEquals(102, s.padded());
        assertEquals(10, s.root());
        assertEquals(30, s.per());
        assertEquals(40, s.start(1));
        assertEquals(70, s.end(1));

        PrimeSlices even = PrimeSlices.of(100, 4);
        assertEquals(100, even.padded());
        assertEquals(10, even.root());
        assertEquals(22, even.per());
        assertEquals(98, even.uncoveredStart());

        PrimeSlices alone = PrimeSlices.of(49, 1);
        assertEquals(49, alone.padded());
        assertEquals(7, alone.root());
        assertEquals(42, alone.per());
    }

    @Test
    void shouldNotFlagTheSquareOfTheRoot() {
        PrimeSlices s = PrimeSlices.of(49, 4);
        assertEquals(52, s.padded());
        assertEquals(7, s.root());
        assertEquals(11, s.per());
        assertEquals(40, s.start(3));
        byte[] flags = s.markSlice(3);
        assertEquals(0, flags[(int) (49 - s.start(3))]);
        assertEquals(1, flags[(int) (47 - s.start(3))]);
        assertEquals(0, PrimeSlices.mark(121, 122)[0]);
        assertEquals(1, PrimeSlices.mark(2, 3)[0]);
        assertEquals(0, PrimeSlices.mark(0, 2)[0] + PrimeSlices.mark(0, 2)[1]);
    }

    @Test
    void shouldFlagExactlyThePrimesOfEverySliceAndCoverEverythingBelowTheNumber() {
        for (long n = 0; n <= 400; n++) {
            for (int w = 1; w <= 9; w++) {
                checkCoverage(n, w);
            }
        }
        for (long n : new long[] {49, 9_973, 10_000, 65_537, 100_003}) {
            for (int w : new int[] {1, 2, 3, 7, 16}) {
                checkCoverage(n, w);
            }
        }
    }

    private static void checkCoverage(long n, int w) {
        PrimeSlices s = PrimeSlices.of(n, w);
        assertEquals(n % w == 0 ? n : n + w - n % w, s.padded(), "n=" + n + " w=" + w);
        assertEquals((long) Math.floor(Math.sqrt(s.padded())), s.root());
        assertEquals((s.padded() - s.root()) / w, s.per());
        List<Long> found = new ArrayList<>();
        collect(0, PrimeSlices.mark(0, s.root()), n, found);
        for (int r = 0; r < w; r++) {
            byte[] flags = s.markSlice(r);
            assertEquals(s.per(), flags.length);
            for (int j = 0; j < flags.length; j++) {
                assertEquals(isPrime(s.start(r) + j) ? 1 : 0, flags[j], "n=" + n + " w=" + w + " k=" + (s.start(r) + j));
            }
            collect(s.start(r), flags, n, found);
        }
        collect(s.uncoveredStart(), PrimeSlices.mark(s.uncoveredStart(), n), n, found);
        assertEquals(primesBelow(n), found, "n=" + n + " w=" + w);
    }

    private static void collect(long first, byte[] flags, long below, List<Long> into) {
        for (int j = 0; j < flags.length && first + j < below; j++) {
            if (flags[j] == 1) {
                into.add(first + j);
            }
        }
    }

    @Test
    void shouldPrintOnePrimePerLineBelowTheNumber() {
        StringWriter text = new StringWriter();
        PrintWriter out = new PrintWriter(text);

        long count = MpiPrime.print(10, PrimeSlices.mark(10, 30), 24, out);
        out.flush();

        assertEquals(5, count);
        assertEquals(List.of("11", "13", "17", "19", "23"), text.toString().lines().toList());
    }

    @Test
    void shouldRejectNumbersOutOfRange() {
        assertThrows(IllegalArgumentException.class, () -> PrimeSlices.of(-1, 2));
        assertThrows(IllegalArgumentException.class, () -> PrimeSlices.of(PrimeSlices.MAX_NUMBER + 1, 2));
        assertThrows(IllegalArgumentException.class, () -> PrimeSlices.of(10, 0));
    }
}
