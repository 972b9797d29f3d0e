package org.mpiproxy.proxy.internal;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.NodeIds;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/** Builds signed v2 requests as a host would. */
final class V2Datagrams {

    static final byte[] KEY = HexFormat.of().parseHex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
    static final String NODE = "node-a";
    static final ClusterKeys KEYS = ClusterKeys.of(Map.of(1, KEY), 1);

    private final V2Authenticator auth;
    private final long nodeId;
    /** The next request's nonce. */
    final AtomicLong nonce = new AtomicLong(1);
    long now;
    /** The key id requests name (their signing key must be in the keys given). */
    int keyId = 1;

    V2Datagrams(ClusterKeys keys, String node, long now) {
        this.auth = new V2Authenticator(keys, NodeIds.of(node), 30_000, 16);
        this.nodeId = NodeIds.of(node);
        this.now = now;
    }

    V2Datagrams(long now) {
        this(KEYS, NODE, now);
    }

    /** @return a proxy-side authenticator for {@link #NODE} with {@link #KEYS} */
    static V2Authenticator hostVerifier() {
        return new V2Authenticator(KEYS, NodeIds.of(NODE), 30_000, 16);
    }

    V2HeaderFlyweight header(ByteBuffer b, int op, long jobId, long rank) {
        return new V2HeaderFlyweight().wrap(b, 0).reset(op, 0).keyId(keyId).nodeId(nodeId).jobId(jobId).rank(rank)
                .timestamp(now).nonce(nonce.getAndIncrement());
    }

    ByteBuffer finish(ByteBuffer b) {
        int length = auth.sign(b, 0);
        return b.limit(length).position(0);
    }

    static ByteBuffer buffer() {
        return ByteBuffer.allocate(65507).order(ByteOrder.LITTLE_ENDIAN);
    }

    ByteBuffer exec(long jobId, int rank, int core, int worldSize, String command) {
        ByteBuffer b = buffer();
        byte[] text = command.getBytes(StandardCharsets.UTF_8);
        header(b, V2HeaderDescriptor.OP_EXEC, jobId, rank).argument(worldSize).core(core).payloadLength(text.length);
        b.put(V2HeaderDescriptor.HEADER_LENGTH, text);
        return finish(b);
    }

    ByteBuffer sendInts(long jobId, int rank, long sequence, int tag, boolean endOfMessage, int... values) {
        ByteBuffer b = buffer();
        header(b, V2HeaderDescriptor.OP_SEND, jobId, rank).flags(endOfMessage ? V2HeaderDescriptor.FLAG_END_OF_MESSAGE : 0)
                .datatype(3).tag(tag).sequence(sequence).argument(values.length).payloadLength(values.length * 4);
        for (int i = 0; i < values.length; i++) {
            b.putInt(V2HeaderDescriptor.HEADER_LENGTH + 4 * i, values[i]);
        }
        return finish(b);
    }

    ByteBuffer recv(long jobId, int rank, long from, int window) {
        ByteBuffer b = buffer();
        header(b, V2HeaderDescriptor.OP_RECV, jobId, rank).sequence(from).argument(window);
        return finish(b);
    }

    ByteBuffer execWithOutput(long jobId, int rank, int worldSize, String command) {
        ByteBuffer b = exec(jobId, rank, 0, worldSize, command);
        new V2HeaderFlyweight().wrap(b, 0).flags(V2HeaderDescriptor.FLAG_OUTPUT);
        return resign(b);
    }

    ByteBuffer outputAck(long jobId, int rank, int stream, long next) {
        ByteBuffer b = buffer();
        header(b, V2HeaderDescriptor.OP_OUTPUT, jobId, rank).tag(stream).ack(next);
        return finish(b);
    }

    ByteBuffer terminate(long jobId, int rank) {
        ByteBuffer b = buffer();
        header(b, V2HeaderDescriptor.OP_TERMINATE, jobId, rank);
        return finish(b);
    }

    /** A TERMINATE with the given argument ({@code V2HeaderDescriptor.TERMINATE_STOP}: stop now). */
    ByteBuffer terminate(long jobId, int rank, long argument) {
        ByteBuffer b = buffer();
        header(b, V2HeaderDescriptor.OP_TERMINATE, jobId, rank).argument(argument);
        return finish(b);
    }

    ByteBuffer status(long jobId, int rank, long from) {
        ByteBuffer b = buffer();
        header(b, V2HeaderDescriptor.OP_STATUS, jobId, rank).sequence(from);
        return finish(b);
    }

    /** Re-signs a datagram after a test changed its header. */
    ByteBuffer resign(ByteBuffer b) {
        b.clear();
        return finish(b);
    }

    /** An EXEC with the PLAIN and OUTPUT flags: the command as given, output to {@code outputPort}. */
    ByteBuffer execPlain(long jobId, int rank, int worldSize, int outputPort, org.mpiproxy.protocol.ExecCommand command) {
        ByteBuffer b = buffer();
        byte[] payload = command.encodePlain();
        header(b, V2HeaderDescriptor.OP_EXEC, jobId, rank).flags(V2HeaderDescriptor.FLAG_PLAIN
                | V2HeaderDescriptor.FLAG_OUTPUT).tag(outputPort).argument(worldSize).payloadLength(payload.length);
        b.put(V2HeaderDescriptor.HEADER_LENGTH, payload);
        return finish(b);
    }

    /**
     * Fragment {@code index} of a job's environment (docs/protocol-v2.md 5.10) in fragments of
     * {@code chunk} bytes; {@code index} -1: the probe.
     */
    ByteBuffer environment(long jobId, byte[] content, int chunk, int index) {
        ByteBuffer b = buffer();
        int count = Math.max(1, (content.length + chunk - 1) / chunk);
        int from = index < 0 ? 0 : index * chunk;
        int length = index < 0 ? 0 : Math.min(chunk, content.length - from);
        byte[] payload = org.mpiproxy.protocol.ExecEnvironment.execPayload(
                org.mpiproxy.protocol.ExecEnvironment.digest(content),
                java.util.Arrays.copyOfRange(content, from, from + length));
        header(b, V2HeaderDescriptor.OP_ENVIRONMENT, jobId, 0).argument(content.length).tag(chunk)
                .sequence(Math.max(0, index)).ack(index < 0 ? 0 : count).payloadLength(payload.length);
        b.put(V2HeaderDescriptor.HEADER_LENGTH, payload);
        return finish(b);
    }

    /** A plain EXEC (no OUTPUT) naming the job environment {@code digest} (docs/protocol-v2.md 5.10). */
    ByteBuffer execNaming(long jobId, int rank, int worldSize, byte[] digest, org.mpiproxy.protocol.ExecCommand command) {
        ByteBuffer b = buffer();
        byte[] payload = org.mpiproxy.protocol.ExecEnvironment.execPayload(digest, command.encodePlain());
        header(b, V2HeaderDescriptor.OP_EXEC, jobId, rank).flags(V2HeaderDescriptor.FLAG_PLAIN
                | V2HeaderDescriptor.FLAG_ENVIRONMENT).argument(worldSize).payloadLength(payload.length);
        b.put(V2HeaderDescriptor.HEADER_LENGTH, payload);
        return finish(b);
    }

    /** A CREDENTIAL (docs/protocol-v2.md 5.9) presenting {@code credential}, an encoded one, for its job. */
    ByteBuffer credential(long jobId, byte[] credential) {
        ByteBuffer b = buffer();
        header(b, V2HeaderDescriptor.OP_CREDENTIAL, jobId, 0).payloadLength(credential.length);
        b.put(V2HeaderDescriptor.HEADER_LENGTH, credential);
        return finish(b);
    }

    /** Fragment {@code index} of {@code count} of PMI fence {@code epoch}, with the given pairs. */
    ByteBuffer pmiFence(long jobId, int epoch, int index, int count, java.util.Map<String, String> pairs) {
        ByteBuffer b = buffer();
        byte[] payload = org.mpiproxy.protocol.pmi.PmiSpace.encode(pairs, 1000).get(0);
        header(b, V2HeaderDescriptor.OP_PMI, jobId, 0).argument(epoch).sequence(index).ack(count)
                .payloadLength(payload.length);
        b.put(V2HeaderDescriptor.HEADER_LENGTH, payload);
        return finish(b);
    }
}
