package org.mpiproxy.benchmarks;

import java.lang.reflect.Field;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import sun.misc.Unsafe;

/**
 * Raw memory access for {@link MappedMessageRing} through {@code sun.misc.Unsafe} (module
 * {@code jdk.unsupported}, which class-path programs read by default; in Karaf the system bundle
 * exports {@code sun.misc} and boot-delegates {@code sun.*}). No access here is checked: the ring
 * validates each record's bounds once before it touches its bytes.
 * <p>
 * This class fails to initialise when {@code sun.misc.Unsafe} is missing or refuses access;
 * {@link #probe()} reports that instead of throwing, and the ring then uses its checked
 * {@code ByteBuffer} accesses.
 */
final class RingUnsafeMemory {

    /** Set to {@code false} to make every ring use the checked {@code ByteBuffer} accesses. */
    static final String PROPERTY = "org.mpiproxy.channel.shm.unsafe";

    private static final Unsafe U;
    private static final long ADDRESS;
    private static final long BYTE_ARRAY_BASE;

    static {
        try {
            Field theUnsafe = Unsafe.class.getDeclaredField("theUnsafe");
            theUnsafe.setAccessible(true);
            U = (Unsafe) theUnsafe.get(null);
            ADDRESS = U.objectFieldOffset(Buffer.class.getDeclaredField("address"));
            BYTE_ARRAY_BASE = U.arrayBaseOffset(byte[].class);
            if (U.arrayIndexScale(byte[].class) != 1) {
                throw new IllegalStateException("byte[] index scale " + U.arrayIndexScale(byte[].class));
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private RingUnsafeMemory() {
    }

    /**
     * @return whether raw access is allowed (property {@value #PROPERTY} not {@code false}) and
     *         works: it reads back the address of a direct buffer through it
     */
    static boolean probe() {
        if ("false".equalsIgnoreCase(System.getProperty(PROPERTY))) {
            return false;
        }
        try {
            ByteBuffer test = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
            test.putLong(0, 0x0102030405060708L);
            return getLong(address(test)) == 0x0102030405060708L;
        } catch (LinkageError | RuntimeException e) {
            return false;
        }
    }

    /** @return the address of index 0 of a direct buffer */
    static long address(ByteBuffer direct) {
        return U.getLong(direct, ADDRESS);
    }

    /** @return the offset of index 0 of a heap buffer's array, for the {@code Object, long} accessors */
    static long arrayOffset(ByteBuffer heap) {
        return BYTE_ARRAY_BASE + heap.arrayOffset();
    }

    static int getInt(long address) {
        return U.getInt(address);
    }

    static long getLong(long address) {
        return U.getLong(address);
    }

    static void putInt(long address, int value) {
        U.putInt(address, value);
    }

    static void putLong(long address, long value) {
        U.putLong(address, value);
    }

    /** Acquire (volatile) load. */
    static int getIntAcquire(long address) {
        return U.getIntVolatile(null, address);
    }

    /** Acquire (volatile) load. */
    static long getLongAcquire(long address) {
        return U.getLongVolatile(null, address);
    }

    /** Release (ordered) store. */
    static void putIntRelease(long address, int value) {
        U.putOrderedInt(null, address, value);
    }

    /** Release (ordered) store. */
    static void putLongRelease(long address, long value) {
        U.putOrderedLong(null, address, value);
    }

    /**
     * Copies bytes; a {@code null} base means an absolute address, an array base an offset from
     * {@link #arrayOffset}. Short runs go word by word, longer ones through {@code copyMemory}.
     */
    static void copy(Object fromBase, long from, Object toBase, long to, int length) {
        if (length > 64) {
            U.copyMemory(fromBase, from, toBase, to, length);
            return;
        }
        int i = 0;
        for (; i + 8 <= length; i += 8) {
            U.putLong(toBase, to + i, U.getLong(fromBase, from + i));
        }
        if (i + 4 <= length) {
            U.putInt(toBase, to + i, U.getInt(fromBase, from + i));
            i += 4;
        }
        for (; i < length; i++) {
            U.putByte(toBase, to + i, U.getByte(fromBase, from + i));
        }
    }
}
