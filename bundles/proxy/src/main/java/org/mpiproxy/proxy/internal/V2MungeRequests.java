package org.mpiproxy.proxy.internal;

import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_MUNGE;
import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_REPLY;
import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.MAC_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_CREDENTIAL;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.JobCredential;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.process.Munge;
import org.slf4j.Logger;

/**
 * CREDENTIAL requests that MUNGE vouches for (docs/protocol-v2.md 4.3): a user on a machine
 * without a proxy. The receive thread takes at most {@value #MAX_PER_SECOND} a second (the rest is
 * dropped and counted) and hands them to one thread of their own, which has {@code munged} decode
 * the request's MUNGE credential; when its line names this node and the header's job id and nonce,
 * it issues a job credential ({@link CredentialIssuer#issue}) for the uid and gid MUNGE names, and
 * the receive thread answers with a MUNGE credential restricted to that uid holding the job
 * credential and its job key, signed with the job key. Anything else is refused without a reply:
 * counted ({@code v2.munge.refused}) and logged at most once every 10 s. The job key is not made
 * known to this node: the launcher presents the credential as to any node (5.9). The receive
 * thread's methods run under the dispatcher's lock; the decoding thread hands back through the relay.
 */
final class V2MungeRequests {

    /** The most MUNGE requests taken a second. */
    static final int MAX_PER_SECOND = 64;
    /** The longest MUNGE credential a request may carry. */
    static final int MAX_CREDENTIAL_BYTES = 1024;
    /** The first word of the line a request's MUNGE credential carries. */
    static final String LINE = "mpiproxy-credential-request-1";

    private static final long SECOND_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final V2Replies replies;
    private final RelayQueue relay;
    private final Supplier<V2Settings> v2;
    private final LongSupplier clock;
    private final ProxyCounters<V2Counter> counters;
    private final RateLimitedLog<V2Counter> lines;
    private final Logger log;
    private final SecureRandom random = new SecureRandom();
    private final V2HeaderFlyweight request = new V2HeaderFlyweight();
    private final ThreadPoolExecutor decoder;
    private long windowStartNanos;
    private int inWindow;

    /**
     * @param replies  the dispatcher's replies: node id, reply buffer, sending
     * @param relay    runs the answers on the receive thread
     * @param v2       the v2 settings in force: the cluster keys sign the credentials, valid for their
     *                 {@code identity.credential.seconds}
     * @param clock    milliseconds since the epoch
     * @param counters the dispatcher's counters
     * @param lines    the dispatcher's rate-limited log
     * @param log      where refusals are logged
     */
    V2MungeRequests(V2Replies replies, RelayQueue relay, Supplier<V2Settings> v2, LongSupplier clock,
                    ProxyCounters<V2Counter> counters, RateLimitedLog<V2Counter> lines, Logger log) {
        this.replies = replies;
        this.relay = relay;
        this.v2 = v2;
        this.clock = clock;
        this.counters = counters;
        this.lines = lines;
        this.log = log;
        this.decoder = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(MAX_PER_SECOND), r -> {
                    Thread t = new Thread(r, "mpiproxy-v2-munge");
                    t.setDaemon(true);
                    return t;
                });
    }

    /**
     * A datagram the authenticator found to be a MUNGE request ({@link V2Authenticator#MUNGE}); receive thread.
     *
     * @param datagram the datagram, read here (it is not kept)
     * @param offset   absolute index of its first byte
     * @param length   its length
     * @param source   where it came from, and where the answer goes
     */
    void onRequest(ByteBuffer datagram, int offset, int length, InetSocketAddress source) {
        counters.increment(V2Counter.MUNGE_REQUESTS);
        long now = System.nanoTime();
        if (now - windowStartNanos >= SECOND_NANOS) {
            windowStartNanos = now;
            inWindow = 0;
        }
        if (++inWindow > MAX_PER_SECOND) {
            counters.increment(V2Counter.MUNGE_DROPPED);
            return;
        }
        V2HeaderFlyweight header = request.wrap(datagram, offset);
        int payload = header.payloadLength();
        String problem = payload == 0 || payload > MAX_CREDENTIAL_BYTES ? payload + "-byte MUNGE credential"
                : header.nodeId() != replies.nodeId() ? "for another node" : header.rank() != 0 ? "rank not 0"
                : !zeroMac(datagram, offset + length - MAC_LENGTH) ? "MAC field not zero" : null;
        if (problem != null) {
            refused(source, problem);
            return;
        }
        byte[] text = new byte[payload];
        datagram.get(header.payloadOffset(), text);
        String expected = LINE + " " + hex(header.nodeId()) + " " + hex(header.jobId()) + " " + hex(header.nonce());
        V2Settings settings = v2.get();
        CredentialIssuer issuer = new CredentialIssuer(settings.keys(), settings.nodeId(), clock, random,
                settings.credentialSeconds());
        long jobId = header.jobId();
        try {
            decoder.execute(() -> decode(new String(text, StandardCharsets.US_ASCII), expected, jobId, issuer, source));
        } catch (RejectedExecutionException e) {
            counters.increment(V2Counter.MUNGE_DROPPED);
        }
    }

    /** On the decoding thread: has munged decode it, checks its line, issues the credential. */
    private void decode(String credential, String expected, long jobId, CredentialIssuer issuer,
                        InetSocketAddress source) {
        try {
            Munge.Decoded decoded = Munge.decode(credential);
            String line = new String(decoded.payload(), StandardCharsets.US_ASCII);
            if (!line.equals(expected)) {
                relay.post(transport -> refused(source, "its line names another request (uid " + decoded.uid()
                        + ")"));
                return;
            }
            ClusterKeys keys = issuer.keys();
            JobCredential issued = issuer.issue(jobId, decoded.uid(), decoded.gid());
            byte[] jobKey = issued.jobKey(keys);
            byte[] inner = new byte[JobCredential.LENGTH + jobKey.length];
            System.arraycopy(issued.encode(keys), 0, inner, 0, JobCredential.LENGTH);
            System.arraycopy(jobKey, 0, inner, JobCredential.LENGTH, jobKey.length);
            byte[] answer = Munge.encode(inner, decoded.uid()).getBytes(StandardCharsets.US_ASCII);
            relay.post(transport -> answer(transport, source, issued.jobId(), answer, jobKey));
        } catch (IllegalArgumentException | IllegalStateException e) {
            relay.post(transport -> refused(source, e.getMessage()));
        }
    }

    /** On the receive thread: the reply, signed with the job key. */
    private void answer(DatagramTransport transport, InetSocketAddress source, long jobId, byte[] answer,
                        byte[] jobKey) {
        if (answer.length > v2.get().maxPayload()) {
            refused(source, "the answer's MUNGE credential has " + answer.length + " bytes, more than a datagram");
            return;
        }
        counters.increment(V2Counter.MUNGE_ANSWERED);
        replies.header().reset(OP_CREDENTIAL, FLAG_REPLY | FLAG_MUNGE).keyId(JobCredential.JOB_KEY_ID)
                .nodeId(replies.nodeId()).jobId(jobId).result(MpiErrors.SUCCESS);
        replies.buffer().put(HEADER_LENGTH, answer);
        V2Authenticator signer = new V2Authenticator(JobCredential.hostKeys(jobKey), replies.nodeId(), 0, 1);
        replies.send(transport, answer.length, source, signer);
    }

    /** On the receive thread: counts and logs a refusal; nothing is sent. */
    private void refused(InetSocketAddress source, String why) {
        counters.increment(V2Counter.MUNGE_REFUSED);
        if (lines.permit(V2Counter.MUNGE_REFUSED)) {
            log.warn("v2 MUNGE CREDENTIAL from {} refused: {} ({} similar lines suppressed)", Job.ownerText(source),
                    why, lines.takeSuppressed(V2Counter.MUNGE_REFUSED));
        }
    }

    /** Stops the decoding thread; requests still waiting are not answered. */
    void close() {
        decoder.shutdownNow();
    }

    private static boolean zeroMac(ByteBuffer datagram, int macOffset) {
        for (int i = 0; i < MAC_LENGTH; i++) {
            if (datagram.get(macOffset + i) != 0) {
                return false;
            }
        }
        return true;
    }

    private static String hex(long value) {
        return String.format("%016x", value);
    }
}
