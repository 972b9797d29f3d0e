package org.mpiproxy.cli;

import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.JobCredential;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/**
 * A job's credential as the launcher presents it to the nodes (docs/protocol-v2.md 4.1, 5.9): the
 * launcher signs the job's datagrams with the job key (key id 0), and makes the key known to each
 * node with CREDENTIAL before its first request there, and again whenever the node refuses a
 * request with reason 6, no credential. A node that refuses the credential itself (202, 203)
 * ends the job: {@link #refusal} says which and why. Rank 0, which runs here as the launching
 * user, gets the job key and the credential in its environment ({@link #toRankZero}) to do the
 * same itself; the other ranks never get them. Thread-safe.
 */
final class V2Credential {

    /** The operation that presents a credential (docs/protocol-v2.md 5.9). */
    static final int OP_CREDENTIAL = 9;
    /** The refusal reason of a request signed with a job key the node does not know (3.5). */
    static final int REASON_NO_CREDENTIAL = 6;
    /** CREDENTIAL refused: the job is another user's, or was made under a cluster key, or uid 0. */
    static final int ERR_PERMISSION = 202;
    /** CREDENTIAL refused: expired, or issued in the future. */
    static final int ERR_EXPIRED = 203;
    /** Rank 0's environment variable with the job key, 64 hexadecimal digits (the MPI library signs with it). */
    static final String JOB_KEY_ENV = "MPIPROXY_JOB_KEY";
    /** Rank 0's environment variable with the credential, 176 hexadecimal digits (the MPI library presents it). */
    static final String CREDENTIAL_ENV = "MPIPROXY_CREDENTIAL";
    /** How long a node gets to answer a credential presented again after a refusal. */
    static final Duration AGAIN_WAIT = Duration.ofSeconds(5);

    private static final long RESEND_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    private final long jobId;
    private final byte[] credential;
    private final ClusterKeys keys;
    private final Set<InetSocketAddress> presented = new HashSet<>();
    private String refusal;

    /**
     * @param jobId      the job, the credential's
     * @param credential the credential, {@value JobCredential#LENGTH} bytes
     * @param jobKey     its job key
     */
    V2Credential(long jobId, byte[] credential, byte[] jobKey) {
        if (credential.length != JobCredential.LENGTH) {
            throw new IllegalArgumentException("a credential has " + JobCredential.LENGTH + " bytes, not "
                    + credential.length);
        }
        this.jobId = jobId;
        this.credential = credential.clone();
        this.keys = JobCredential.hostKeys(jobKey);
    }

    /** @return the job the credential is for */
    /**
     * @param credential a host's credential, or {@code null} under a cluster key
     * @return the job a probe asks STATUS of: job 0 under a cluster key, the credential's own job
     *         under a job key (which cannot sign for job 0)
     */
    static long probeJob(V2Credential credential) {
        return credential == null ? 0 : credential.jobId();
    }

    long jobId() {
        return jobId;
    }

    /** @return the job key as keys that sign with key id 0 */
    ClusterKeys keys() {
        return keys;
    }

    /** @return a copy of the credential's bytes */
    byte[] bytes() {
        return credential.clone();
    }

    /** @return the first node's refusal of the credential as one line, or {@code null} while none refused it */
    synchronized String refusal() {
        return refusal;
    }

    /**
     * Presents the credential to every node it was not presented to yet, from a socket of its own,
     * repeated until each answered or the time is up. A node that does not answer is left: its
     * requests go unanswered (or are refused) as they would without a credential.
     *
     * @param nodes the proxies
     * @param wait  how long to wait for their answers
     * @return {@code null}, or the first node's refusal in one line (then the job cannot run)
     * @throws IOException when the socket fails
     */
    synchronized String presentTo(Collection<InetSocketAddress> nodes, Duration wait) throws IOException {
        Set<InetSocketAddress> pending = new LinkedHashSet<>(nodes);
        pending.removeAll(presented);
        if (pending.isEmpty() || refusal != null) {
            return refusal;
        }
        V2Control.Signer signer = new V2Control.Signer(keys);
        RequestRounds.run(0, signer.in, wait, RESEND_NANOS, new RequestRounds.Exchange() {
            @Override
            public void send(DatagramChannel channel) throws IOException {
                for (InetSocketAddress node : pending) {
                    if (!signer.holdsOff(node)) {
                        channel.send(signer.request(node, OP_CREDENTIAL, jobId, 0, 0, h -> { }, credential), node);
                    }
                }
            }

            @Override
            public void receive(DatagramChannel channel, InetSocketAddress source, ByteBuffer in) {
                if (!pending.contains(source) || signer.refused(source)) {
                    return; // busy: presented again after the node's back-off
                }
                V2HeaderFlyweight h = signer.verify(source, jobId);
                if (h == null || h.operation() != OP_CREDENTIAL) {
                    return;
                }
                pending.remove(source);
                if (h.result() == MpiErrors.SUCCESS) {
                    presented.add(source);
                } else if (refusal == null) {
                    byte[] reason = new byte[h.payloadLength()];
                    in.get(HEADER_LENGTH, reason);
                    refusal = "node " + source.getAddress().getHostAddress() + ":" + source.getPort()
                            + " refused the job's credential (" + resultName(h.result()) + "): "
                            + new String(reason, StandardCharsets.UTF_8).strip();
                }
            }

            @Override
            public boolean done() {
                return pending.isEmpty() || refusal != null;
            }
        });
        return refusal;
    }

    /**
     * After a node refused a request with reason 6: it does not know the job key (it was
     * restarted, or forgot the job), so the credential is presented to it again; the refused
     * request is still pending and goes again with its next round.
     *
     * @param node the node
     * @throws IOException when the socket fails
     */
    synchronized void presentAgain(InetSocketAddress node) throws IOException {
        presented.remove(node);
        presentTo(List.of(node), AGAIN_WAIT);
    }

    /**
     * Hands the job key and the credential to rank 0 in its environment, which only its user (the
     * launching user) and root can read; without a credential (a cluster key), takes out any such
     * variables, so that rank 0 signs as the launcher does. Never for the EXECs of other ranks.
     *
     * @param env        rank 0's environment
     * @param credential the job's credential, or {@code null}
     */
    static void toRankZero(Map<String, String> env, V2Credential credential) {
        env.remove(JOB_KEY_ENV);
        env.remove(CREDENTIAL_ENV);
        if (credential != null) {
            env.put(JOB_KEY_ENV, HexFormat.of().formatHex(credential.keys.key(JobCredential.JOB_KEY_ID)));
            env.put(CREDENTIAL_ENV, HexFormat.of().formatHex(credential.credential));
        }
    }

    /** @return the name of a CREDENTIAL reply's result */
    static String resultName(int result) {
        return result == ERR_PERMISSION ? "MPIPROXY_ERR_PERMISSION" : result == ERR_EXPIRED ? "MPIPROXY_ERR_EXPIRED"
                : MpiErrors.name(result);
    }
}
