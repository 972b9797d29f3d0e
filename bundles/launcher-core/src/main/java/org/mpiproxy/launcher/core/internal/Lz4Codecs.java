package org.mpiproxy.launcher.core.internal;

import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;
import net.jpountz.xxhash.XXHash32;
import net.jpountz.xxhash.XXHashFactory;

/** The LZ4 codec and frame checksum: JNI when it loads, else the pure-Java safe implementations. */
final class Lz4Codecs {

    private static final LZ4Factory LZ4 = lz4Factory();
    private static final XXHashFactory XXHASH = xxHashFactory();
    private static final LZ4SafeDecompressor DECOMPRESSOR = LZ4.safeDecompressor();
    private static final XXHash32 CHECKSUM = XXHASH.hash32();

    private Lz4Codecs() {
    }

    static LZ4SafeDecompressor decompressor() {
        return DECOMPRESSOR;
    }

    static XXHash32 checksum() {
        return CHECKSUM;
    }

    /** @return which implementations are in use, for the log */
    static String description() {
        return LZ4 + ", " + XXHASH;
    }

    private static LZ4Factory lz4Factory() {
        try {
            return LZ4Factory.nativeInstance();
        } catch (LinkageError | RuntimeException e) {
            return LZ4Factory.safeInstance();
        }
    }

    private static XXHashFactory xxHashFactory() {
        try {
            return XXHashFactory.nativeInstance();
        } catch (LinkageError | RuntimeException e) {
            return XXHashFactory.safeInstance();
        }
    }
}
