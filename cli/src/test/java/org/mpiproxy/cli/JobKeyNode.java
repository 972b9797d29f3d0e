package org.mpiproxy.cli;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.JobCredential;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.NodeIds;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.V2RefusalDescriptor;
import org.mpiproxy.protocol.V2StatusDescriptor;

/**
 * A fake v2 proxy that serves only datagrams signed with a job key (key id 0, docs/protocol-v2.md
 * 4.1): it learns a job's key from CREDENTIAL (the credential decoded under the cluster key, the
 * request's MAC checked with the job key it gives), refuses a request of a job whose key it does
 * not know with reason 6, and checks every other request with a {@link V2Authenticator} over
 * {@link ClusterKeys#ofJobKey}. It answers STATUS (MPI_ERR_COMM for a job it does not have, else
 * its ranks, exited 0), EXEC and TERMINATE, and logs what it took.
 */
final class JobKeyNode implements AutoCloseable {

    /** What it took, in order: {@code CREDENTIAL}, {@code STATUS}, {@code EXEC 1}, ... and what it refused. */
    final List<String> log = new CopyOnWriteArrayList<>();
    /** The payload of every EXEC taken (the plain form: program, arguments, environment). */
    final List<String> execPayloads = new CopyOnWriteArrayList<>();
    /** The result of every CREDENTIAL (0: accepted) and its reason text. */
    volatile int credentialResult;
    volatile String credentialReason = "";
    /** Forgets the job's key at the first EXEC and refuses that EXEC with reason 6, as after a restart. */
    volatile boolean forgetAtFirstExec;

    private final ClusterKeys cluster;
    private final DatagramChannel channel;
    private final Map<Long, byte[]> jobKeys = new ConcurrentHashMap<>();
    private final Map<Long, List<Long>> ranks = new ConcurrentHashMap<>();
    private final long nodeId = NodeIds.of("127.0.0.1");
    private final Thread thread;

    JobKeyNode(ClusterKeys cluster) throws IOException {
        this.cluster = cluster;
        channel = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        thread = new Thread(this::serve, "job-key-node");
        thread.setDaemon(true);
        thread.start();
    }

    int port() {
        return channel.socket().getLocalPort();
    }

    /** @return the operations it took, without the refused ones and repetitions in a row */
    List<String> taken() {
        List<String> taken = new ArrayList<>();
        for (String entry : log) {
            if (!entry.startsWith("refused") && (taken.isEmpty() || !taken.get(taken.size() - 1).equals(entry))) {
                taken.add(entry);
            }
        }
        return taken;
    }

    private void serve() {
        ByteBuffer in = ByteBuffer.allocate(2048).order(V2HeaderDescriptor.BYTE_ORDER);
        ByteBuffer out = ByteBuffer.allocate(2048).order(V2HeaderDescriptor.BYTE_ORDER);
        try {
            while (true) {
                InetSocketAddress from = (InetSocketAddress) channel.receive(in.clear());
                int length = in.position();
                V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(in, 0);
                if (length < V2HeaderDescriptor.HEADER_LENGTH + V2HeaderDescriptor.MAC_LENGTH) {
                    continue;
                }
                if (h.keyId() != JobCredential.JOB_KEY_ID) {
                    log.add("refused key id " + h.keyId());
                    refuse(in, V2RefusalDescriptor.REASON_NOT_VERIFIED, out, from);
                    continue;
                }
                byte[] jobKey;
                if (h.operation() == V2Credential.OP_CREDENTIAL) {
                    try {
                        JobCredential c = JobCredential.decode(cluster, in, V2HeaderDescriptor.HEADER_LENGTH,
                                h.payloadLength());
                        jobKey = c.jobId() == h.jobId() ? c.jobKey(cluster) : null;
                    } catch (IllegalArgumentException e) {
                        jobKey = null;
                    }
                } else {
                    jobKey = jobKeys.get(h.jobId());
                    if (jobKey == null) {
                        log.add("refused " + name(h) + ": no credential");
                        refuse(in, V2Credential.REASON_NO_CREDENTIAL, out, from);
                        continue;
                    }
                }
                V2Authenticator auth = jobKey == null ? null
                        : new V2Authenticator(ClusterKeys.ofJobKey(jobKey), nodeId, 30_000, 1024);
                if (auth == null || auth.verify(in, 0, length, System.currentTimeMillis()) != V2Authenticator.OK) {
                    log.add("refused " + name(h) + ": not verified");
                    refuse(in, V2RefusalDescriptor.REASON_NOT_VERIFIED, out, from);
                    continue;
                }
                if (answer(h, jobKey, in, out)) {
                    int n = auth.sign(out, 0);
                    channel.send(out.limit(n).position(0), from);
                } else {
                    refuse(in, V2Credential.REASON_NO_CREDENTIAL, out, from);
                }
            }
        } catch (IOException e) {
            // closed by the test
        }
    }

    /** @return {@code false} when the request is refused with reason 6 instead */
    private boolean answer(V2HeaderFlyweight h, byte[] jobKey, ByteBuffer in, ByteBuffer out) {
        long job = h.jobId();
        V2HeaderFlyweight r = new V2HeaderFlyweight().wrap(out.clear(), 0).reset(h.operation(),
                V2HeaderDescriptor.FLAG_REPLY).keyId(JobCredential.JOB_KEY_ID).nodeId(nodeId).jobId(job)
                .rank(h.rank()).sequence(h.sequence()).timestamp(System.currentTimeMillis())
                .nonce(System.nanoTime());
        String name = name(h);
        if (h.operation() == V2Credential.OP_CREDENTIAL) {
            if (credentialResult == 0) {
                jobKeys.put(job, jobKey);
            } else {
                byte[] why = credentialReason.getBytes(StandardCharsets.UTF_8);
                r.result(credentialResult).payloadLength(why.length);
                out.put(V2HeaderDescriptor.HEADER_LENGTH, why);
            }
        } else if (h.operation() == V2HeaderDescriptor.OP_EXEC) {
            if (forgetAtFirstExec) {
                forgetAtFirstExec = false;
                jobKeys.remove(job);
                log.add("refused " + name + ": no credential");
                return false;
            }
            ranks.computeIfAbsent(job, j -> new CopyOnWriteArrayList<>()).add(h.rank());
            byte[] payload = new byte[h.payloadLength()];
            in.get(V2HeaderDescriptor.HEADER_LENGTH, payload);
            execPayloads.add(new String(payload, StandardCharsets.UTF_8));
        } else if (h.operation() == V2HeaderDescriptor.OP_STATUS) {
            List<Long> mine = ranks.getOrDefault(job, List.of());
            if (mine.isEmpty()) {
                r.result(MpiErrors.ERR_COMM);
            }
            for (int i = 0; i < mine.size(); i++) {
                V2StatusDescriptor.put(out, V2HeaderDescriptor.HEADER_LENGTH + i * V2StatusDescriptor.ENTRY_LENGTH,
                        mine.get(i), V2StatusDescriptor.STATE_EXITED, 0, 4242, 0);
            }
            r.argument(mine.size()).payloadLength(mine.size() * V2StatusDescriptor.ENTRY_LENGTH);
        } else if (h.operation() != V2HeaderDescriptor.OP_TERMINATE && h.operation() != V2HeaderDescriptor.OP_OUTPUT) {
            log.add("refused " + name + ": not served here");
        }
        log.add(name);
        return true;
    }

    private static String name(V2HeaderFlyweight h) {
        switch (h.operation()) {
            case V2Credential.OP_CREDENTIAL: return "CREDENTIAL";
            case V2HeaderDescriptor.OP_EXEC: return "EXEC " + h.rank();
            case V2HeaderDescriptor.OP_STATUS: return "STATUS";
            case V2HeaderDescriptor.OP_TERMINATE: return "TERMINATE " + h.rank();
            default: return "op " + h.operation();
        }
    }

    private void refuse(ByteBuffer request, int reason, ByteBuffer out, InetSocketAddress to) throws IOException {
        V2RefusalDescriptor.put(request, 0, reason, out.clear(), 0);
        channel.send(out.limit(V2RefusalDescriptor.LENGTH).position(0), to);
    }

    @Override
    public void close() throws Exception {
        channel.close();
        thread.join(5000);
    }
}
