package org.mpiproxy.benchmarks;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What authenticating one v2 datagram costs with the MACs the JDK has, on this CPU: the one v2
 * uses (HMAC-SHA256, as {@code V2Authenticator} computes it over a direct buffer), HMAC-SHA512,
 * GMAC (AES-GCM over associated data only, a fresh 12-byte nonce per datagram, as a sender would
 * need; over a direct buffer and over a heap array), AES-GCM encrypting the datagram, and Poly1305
 * (ChaCha20-Poly1305 over associated data only). Each call covers {@code size} bytes less the MAC
 * field.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class MacBenchmark {

    /** Datagram size in bytes: the default and the largest v2 datagram. */
    @Param({"1448", "65507"})
    public int size;

    private ByteBuffer datagram;
    private byte[] heap;
    private byte[] sealed;
    private byte[] opened;
    private byte[] sealedOnce;
    private final byte[] onceNonce = new byte[12];
    private Cipher gcmOpen;
    private final byte[] tag = new byte[64];
    private Mac hmac256;
    private Mac hmac512;
    private Cipher gcm;
    private Cipher chacha;
    private SecretKeySpec aesKey;
    private SecretKeySpec chachaKey;
    private final byte[] nonce = new byte[12];
    private long counter;

    @Setup
    public void setUp() throws GeneralSecurityException {
        byte[] key = new byte[32];
        new SplittableRandom(7).nextBytes(key);
        int length = size - V2HeaderDescriptor.MAC_LENGTH;
        datagram = ByteBuffer.allocateDirect(length);
        byte[] content = new byte[length];
        new SplittableRandom(11).nextBytes(content);
        datagram.put(content).flip();
        heap = content;
        sealed = new byte[length + 16];
        opened = new byte[length];
        gcmOpen = Cipher.getInstance("AES/GCM/NoPadding");
        Cipher once = Cipher.getInstance("AES/GCM/NoPadding");
        once.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, 0, 16, "AES"), new GCMParameterSpec(128, onceNonce));
        sealedOnce = once.doFinal(content);
        hmac256 = Mac.getInstance("HmacSHA256");
        hmac256.init(new SecretKeySpec(key, "HmacSHA256"));
        hmac512 = Mac.getInstance("HmacSHA512");
        hmac512.init(new SecretKeySpec(key, "HmacSHA512"));
        aesKey = new SecretKeySpec(key, 0, 16, "AES");
        gcm = Cipher.getInstance("AES/GCM/NoPadding");
        chachaKey = new SecretKeySpec(key, "ChaCha20");
        chacha = Cipher.getInstance("ChaCha20-Poly1305");
    }

    private void nextNonce() {
        long n = ++counter;
        for (int i = 0; i < 8; i++) {
            nonce[4 + i] = (byte) (n >>> (8 * i));
        }
    }

    @Benchmark
    public byte[] hmacSha256() throws GeneralSecurityException {
        datagram.clear();
        hmac256.update(datagram);
        hmac256.doFinal(tag, 0);
        return tag;
    }

    @Benchmark
    public byte[] hmacSha512() throws GeneralSecurityException {
        datagram.clear();
        hmac512.update(datagram);
        hmac512.doFinal(tag, 0);
        return tag;
    }

    @Benchmark
    public byte[] gmac() throws GeneralSecurityException {
        nextNonce();
        gcm.init(Cipher.ENCRYPT_MODE, aesKey, new GCMParameterSpec(128, nonce));
        datagram.clear();
        gcm.updateAAD(datagram);
        return gcm.doFinal();
    }

    /** GMAC over a heap array: whether the JDK's GHASH is faster there than over a direct buffer. */
    @Benchmark
    public byte[] gmacHeap() throws GeneralSecurityException {
        nextNonce();
        gcm.init(Cipher.ENCRYPT_MODE, aesKey, new GCMParameterSpec(128, nonce));
        gcm.updateAAD(heap);
        return gcm.doFinal();
    }

    /**
     * AES-GCM encrypting the datagram (its tag then covers the ciphertext): the path the JDK's
     * AES-GCM intrinsics serve.
     */
    @Benchmark
    public byte[] gcmEncrypt() throws GeneralSecurityException {
        nextNonce();
        gcm.init(Cipher.ENCRYPT_MODE, aesKey, new GCMParameterSpec(128, nonce));
        gcm.doFinal(heap, 0, heap.length, sealed, 0);
        return sealed;
    }

    /** The receiver's side of {@link #gcmEncrypt}: decrypt and verify the tag. */
    @Benchmark
    public byte[] gcmDecrypt() throws GeneralSecurityException {
        gcmOpen.init(Cipher.DECRYPT_MODE, aesKey, new GCMParameterSpec(128, onceNonce));
        gcmOpen.doFinal(sealedOnce, 0, sealedOnce.length, opened, 0);
        return opened;
    }

    @Benchmark
    public byte[] poly1305() throws GeneralSecurityException {
        nextNonce();
        chacha.init(Cipher.ENCRYPT_MODE, chachaKey, new IvParameterSpec(nonce));
        datagram.clear();
        chacha.updateAAD(datagram);
        return chacha.doFinal();
    }
}
