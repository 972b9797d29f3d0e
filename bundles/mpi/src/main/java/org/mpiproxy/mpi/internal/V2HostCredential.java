package org.mpiproxy.mpi.internal;

import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_REPLY;
import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_CREDENTIAL;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.protocol.JobCredential;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/**
 * The job's credential of a host that signs with a job key (docs/protocol-v2.md 4.1, 5.9): presented
 * to every node before the first EXEC, and again to a node that refuses a request of ours with
 * reason 6, no credential (it was restarted, or forgot the job). The refused requests stay pending
 * and go again with their own retransmissions once the node knows the key. A node that refuses the
 * credential itself (MPIPROXY_ERR_PERMISSION, MPIPROXY_ERR_EXPIRED) fails the calls that wait for it
 * with the reason it gave ({@link V2Node#credentialRefusal}). Not thread-safe (the transport's lock).
 */
final class V2HostCredential {

    /** A presentation not answered yet is repeated no sooner than this, at the next refusal of reason 6. */
    static final long AGAIN_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    private final byte[] credential;
    private final long jobId;
    private final DatagramChannel channel;
    private final SplittableRandom random;
    private final LongSupplier epochClock;
    /** The presentation being sent: the exchange's own buffer may hold a signed fragment kept for a resend. */
    private final ByteBuffer out = ByteBuffer.allocateDirect(V2HeaderDescriptor.MIN_DATAGRAM_LENGTH
            + JobCredential.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
    private final V2HeaderFlyweight header = new V2HeaderFlyweight();
    private final V2HeaderFlyweight reply = new V2HeaderFlyweight();

    /**
     * @param credential the credential, {@value JobCredential#LENGTH} bytes
     * @param jobId      its job, the one the host's requests name
     * @param channel    the host's socket: the node answers a presentation to where it came from
     * @param random     the nonces
     * @param epochClock milliseconds since the epoch, the timestamps
     */
    V2HostCredential(byte[] credential, long jobId, DatagramChannel channel, SplittableRandom random,
                     LongSupplier epochClock) {
        if (credential.length != JobCredential.LENGTH) {
            throw new IllegalArgumentException("a credential has " + JobCredential.LENGTH + " bytes, not "
                    + credential.length);
        }
        this.credential = credential.clone();
        this.jobId = jobId;
        this.channel = channel;
        this.random = random;
        this.epochClock = epochClock;
    }

    /**
     * Presents the credential to a node: CREDENTIAL, key id 0, rank 0, the credential as payload,
     * signed with the job key. Nothing is sent to a node that refused the credential, nor while a
     * presentation sent less than {@link #AGAIN_NANOS} ago awaits its answer.
     *
     * @param n   the node
     * @param now {@link System#nanoTime}
     */
    void present(V2Node n, long now) {
        if (n.credentialRefusal != null || n.presenting && now - n.presentedAt < AGAIN_NANOS) {
            return;
        }
        n.presenting = true;
        n.presentedAt = now;
        long nonce = random.nextLong();
        n.sent(nonce);
        out.clear();
        header.wrap(out, 0).reset(OP_CREDENTIAL, 0).keyId(JobCredential.JOB_KEY_ID).nodeId(n.auth.nodeId())
                .jobId(jobId).rank(0).timestamp(epochClock.getAsLong()).nonce(nonce)
                .payloadLength(JobCredential.LENGTH);
        out.put(HEADER_LENGTH, credential);
        int length = n.auth.sign(out, 0);
        out.limit(length).position(0);
        try {
            channel.send(out, n.address);
        } catch (IOException e) {
            throw new MpiException(MpiErrors.ERR_IO, "sending the credential to " + n.where() + " failed: "
                    + e.getMessage(), e);
        }
    }

    /**
     * Takes a CREDENTIAL reply: it counts only from a node a presentation awaits an answer from,
     * authentic and for this job. A refusal of the credential is kept as the node's failure.
     *
     * @param n      the node it came from, or {@code null}
     * @param in     the datagram, from index 0
     * @param length its length
     * @param now    {@link System#nanoTime}
     * @return whether it answered a presentation
     */
    boolean onReply(V2Node n, ByteBuffer in, int length, long now) {
        if (n == null || !n.presenting
                || n.auth.verifyReply(in, 0, length, epochClock.getAsLong()) != V2Authenticator.OK) {
            return false;
        }
        reply.wrap(in, 0);
        if ((reply.flags() & FLAG_REPLY) == 0 || reply.jobId() != jobId || reply.rank() != 0) {
            return false;
        }
        int result = reply.result();
        n.heard(now);
        if (result != MpiErrors.SUCCESS) {
            byte[] text = new byte[reply.payloadLength()];
            in.get(HEADER_LENGTH, text);
            String reason = new String(text, StandardCharsets.UTF_8).strip();
            n.credentialRefusal = "the proxy at " + n.where() + " refused the job's credential ("
                    + MpiErrors.name(result) + ")" + (reason.isEmpty() ? "" : ": " + reason);
        }
        return true;
    }
}
