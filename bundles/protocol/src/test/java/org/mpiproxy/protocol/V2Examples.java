package org.mpiproxy.protocol;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Map;

/** Builds the worked examples of docs/protocol-v2.md with the codec. */
final class V2Examples {

    /** The example key: the 32 bytes 00 01 02 ... 1f, key id 1. */
    static final String KEY_HEX = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    static final String NODE = "node-a";
    static final long JOB = 0x0123456789abcdefL;
    /** 2026-01-01T00:00:00Z. */
    static final long TIME = 1767225600000L;

    private V2Examples() {
    }

    static ClusterKeys keys() {
        return ClusterKeys.of(Map.of(1, HexFormat.of().parseHex(KEY_HEX)), 1);
    }

    static V2Authenticator authenticator() {
        return new V2Authenticator(keys(), NodeIds.of(NODE), 30_000, 1024);
    }

    static ByteBuffer exec() {
        ByteBuffer b = buffer();
        byte[] command = "mpiping".getBytes(StandardCharsets.UTF_8);
        header(b, V2HeaderDescriptor.OP_EXEC, 0).rank(1).argument(2).core(0).nonce(0x1122334455667788L)
                .payloadLength(command.length);
        b.put(V2HeaderDescriptor.HEADER_LENGTH, command);
        return finish(b);
    }

    /**
     * A plain EXEC (docs/protocol-v2.md 5.1): rank 1 of 2 runs {@code hostname -s} as given, with
     * {@code OMP_NUM_THREADS=4}, its output to port 40000 of the owner's address.
     */
    static ByteBuffer execPlain() {
        ByteBuffer b = buffer();
        byte[] command = new ExecCommand("hostname", java.util.List.of("-s"), Map.of("OMP_NUM_THREADS", "4"))
                .encodePlain();
        header(b, V2HeaderDescriptor.OP_EXEC, V2HeaderDescriptor.FLAG_OUTPUT | V2HeaderDescriptor.FLAG_PLAIN).rank(1)
                .tag(40000).argument(2).core(0).nonce(0x1122334455667790L).payloadLength(command.length);
        b.put(V2HeaderDescriptor.HEADER_LENGTH, command);
        return finish(b);
    }

    /** Fragment 0 of 1 of PMI fence 1 of the job (docs/protocol-v2.md 5.7): one pair, {@code card-1=tcp#1}. */
    static ByteBuffer pmiFence() {
        ByteBuffer b = buffer();
        byte[] pairs = org.mpiproxy.protocol.pmi.PmiSpace.encode(Map.of("card-1", "tcp#1"), 1000).get(0);
        header(b, V2HeaderDescriptor.OP_PMI, 0).rank(0).argument(1).sequence(0).ack(1).nonce(0x1122334455667791L)
                .payloadLength(pairs.length);
        b.put(V2HeaderDescriptor.HEADER_LENGTH, pairs);
        return finish(b);
    }

    /**
     * The probe of STAGE (docs/protocol-v2.md 5.8): does the node have the 5 bytes {@code hello}
     * (SHA-256 2cf24dba...), to be sent in fragments of 1312 bytes?
     */
    static ByteBuffer stageProbe() {
        ByteBuffer b = buffer();
        byte[] digest;
        try {
            digest = java.security.MessageDigest.getInstance("SHA-256").digest("hello".getBytes(StandardCharsets.UTF_8));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        header(b, V2HeaderDescriptor.OP_STAGE, 0).rank(0).argument(5).tag(1312).sequence(0).ack(0)
                .nonce(0x1122334455667792L).payloadLength(digest.length);
        b.put(V2HeaderDescriptor.HEADER_LENGTH, digest);
        return finish(b);
    }

    static ByteBuffer send() {
        ByteBuffer b = buffer();
        header(b, V2HeaderDescriptor.OP_SEND, V2HeaderDescriptor.FLAG_END_OF_MESSAGE).rank(1).tag(7)
                .datatype(MpiDatatype.INT.code()).sequence(0).argument(2).nonce(0x1122334455667789L)
                .payloadLength(8);
        b.putInt(V2HeaderDescriptor.HEADER_LENGTH, 1).putInt(V2HeaderDescriptor.HEADER_LENGTH + 4, 2);
        return finish(b);
    }

    static ByteBuffer sendAck() {
        ByteBuffer b = buffer();
        header(b, V2HeaderDescriptor.OP_SEND, V2HeaderDescriptor.FLAG_REPLY).rank(1).sequence(0).ack(1)
                .argument(64).timestamp(TIME + 1).nonce(0x8877665544332211L);
        return finish(b);
    }

    /** A rank's line on its standard error, as the proxy streams it (OUTPUT). */
    static ByteBuffer output() {
        ByteBuffer b = buffer();
        byte[] line = "done: 42".getBytes(StandardCharsets.UTF_8);
        header(b, V2HeaderDescriptor.OP_OUTPUT, V2HeaderDescriptor.FLAG_REPLY | V2HeaderDescriptor.FLAG_END_OF_MESSAGE)
                .rank(1).tag(V2HeaderDescriptor.STREAM_STDERR).sequence(5).ack(0).argument(0).timestamp(TIME + 2)
                .nonce(0x8877665544332212L).payloadLength(line.length);
        b.put(V2HeaderDescriptor.HEADER_LENGTH, line);
        return finish(b);
    }

    /** The host's acknowledgement of that line. */
    static ByteBuffer outputAck() {
        ByteBuffer b = buffer();
        header(b, V2HeaderDescriptor.OP_OUTPUT, 0).rank(1).tag(V2HeaderDescriptor.STREAM_STDERR).ack(6)
                .timestamp(TIME + 3).nonce(0x112233445566778aL);
        return finish(b);
    }

    /** An operator's STATUS request for every rank of the job on the node (rank 0, from rank 0). */
    static ByteBuffer status() {
        ByteBuffer b = buffer();
        header(b, V2HeaderDescriptor.OP_STATUS, 0).rank(0).sequence(0).timestamp(TIME + 4)
                .nonce(0x112233445566778bL);
        return finish(b);
    }

    /** The proxy's answer: rank 1 runs (pid 4242, core 0), rank 2 was killed by SIGKILL (137) on core 1. */
    static ByteBuffer statusReply() {
        ByteBuffer b = buffer();
        header(b, V2HeaderDescriptor.OP_STATUS, V2HeaderDescriptor.FLAG_REPLY).rank(0).sequence(0).ack(0)
                .argument(2).timestamp(TIME + 5).nonce(0x8877665544332213L)
                .payloadLength(2 * V2StatusDescriptor.ENTRY_LENGTH);
        V2StatusDescriptor.put(b, V2HeaderDescriptor.HEADER_LENGTH, 1, V2StatusDescriptor.STATE_RUNNING, 0, 4242,
                V2StatusDescriptor.NO_EXIT_STATUS);
        V2StatusDescriptor.put(b, V2HeaderDescriptor.HEADER_LENGTH + V2StatusDescriptor.ENTRY_LENGTH, 2,
                V2StatusDescriptor.STATE_FINISHED, 1, 4243, 137);
        return finish(b);
    }

    /** The proxy's TERMINATE reply for rank 1, started on core 3, which exited with status 3. */
    static ByteBuffer terminateReply() {
        ByteBuffer b = buffer();
        header(b, V2HeaderDescriptor.OP_TERMINATE, V2HeaderDescriptor.FLAG_REPLY).rank(1).argument(3).core(3)
                .timestamp(TIME + 6).nonce(0x8877665544332214L);
        return finish(b);
    }

    /** The empty RECV reply: rank 1 (core 0) is alive, fragments 0..3 were taken, nothing new yet. */
    static ByteBuffer recvEmpty() {
        ByteBuffer b = buffer();
        header(b, V2HeaderDescriptor.OP_RECV, V2HeaderDescriptor.FLAG_REPLY).rank(1).sequence(4).argument(0)
                .timestamp(TIME + 7).nonce(0x8877665544332215L);
        return finish(b);
    }

    /** The RECV reply once rank 1 ended after fragments 0..3: MPI_ERR_TRUNCATE at sequence 4. */
    static ByteBuffer recvTruncate() {
        ByteBuffer b = buffer();
        header(b, V2HeaderDescriptor.OP_RECV, V2HeaderDescriptor.FLAG_REPLY).rank(1).result(MpiErrors.ERR_TRUNCATE)
                .sequence(4).argument(0).timestamp(TIME + 8).nonce(0x8877665544332216L);
        return finish(b);
    }

    /** The owner stops rank 1 now (a Ctrl-C of the job): TERMINATE with the STOP argument bit. */
    static ByteBuffer terminateStop() {
        ByteBuffer b = buffer();
        header(b, V2HeaderDescriptor.OP_TERMINATE, 0).rank(1).argument(V2HeaderDescriptor.TERMINATE_STOP)
                .timestamp(TIME + 9).nonce(0x112233445566778cL);
        return finish(b);
    }

    /** The interim reply to a repeated TERMINATE: a STATUS reply for rank 1, still terminating (pid 4242). */
    static ByteBuffer terminateInterim() {
        ByteBuffer b = buffer();
        header(b, V2HeaderDescriptor.OP_STATUS, V2HeaderDescriptor.FLAG_REPLY).rank(1).sequence(0).ack(0)
                .argument(1).timestamp(TIME + 10).nonce(0x8877665544332217L)
                .payloadLength(V2StatusDescriptor.ENTRY_LENGTH);
        V2StatusDescriptor.put(b, V2HeaderDescriptor.HEADER_LENGTH, 1, V2StatusDescriptor.STATE_TERMINATING, 0, 4242,
                V2StatusDescriptor.NO_EXIT_STATUS);
        return finish(b);
    }

    /**
     * The only fragment of a job's common environment (docs/protocol-v2.md 5.10): the 18 bytes
     * {@code OMP_NUM_THREADS=4} NUL, in fragments of 1312 bytes.
     */
    static ByteBuffer environment() {
        ByteBuffer b = buffer();
        byte[] variables = ExecEnvironment.encode(Map.of("OMP_NUM_THREADS", "4"));
        byte[] payload = ExecEnvironment.execPayload(ExecEnvironment.digest(variables), variables);
        header(b, V2HeaderDescriptor.OP_ENVIRONMENT, 0).rank(0).argument(variables.length).tag(1312).sequence(0)
                .ack(1).nonce(0x1122334455667793L).payloadLength(payload.length);
        b.put(V2HeaderDescriptor.HEADER_LENGTH, payload);
        return finish(b);
    }

    /**
     * A plain EXEC naming that environment (docs/protocol-v2.md 5.10): rank 1 of 2 runs
     * {@code hostname -s} with the job's environment and no variables of its own.
     */
    static ByteBuffer execEnvironment() {
        ByteBuffer b = buffer();
        byte[] digest = ExecEnvironment.digest(ExecEnvironment.encode(Map.of("OMP_NUM_THREADS", "4")));
        byte[] payload = ExecEnvironment.execPayload(digest,
                new ExecCommand("hostname", java.util.List.of("-s"), Map.of()).encodePlain());
        header(b, V2HeaderDescriptor.OP_EXEC, V2HeaderDescriptor.FLAG_OUTPUT | V2HeaderDescriptor.FLAG_PLAIN
                | V2HeaderDescriptor.FLAG_ENVIRONMENT).rank(1).tag(40000).argument(2).core(0)
                .nonce(0x1122334455667794L).payloadLength(payload.length);
        b.put(V2HeaderDescriptor.HEADER_LENGTH, payload);
        return finish(b);
    }

    private static ByteBuffer buffer() {
        return ByteBuffer.allocate(V2HeaderDescriptor.DEFAULT_DATAGRAM_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static V2HeaderFlyweight header(ByteBuffer b, int op, int flags) {
        return new V2HeaderFlyweight().wrap(b, 0).reset(op, flags).keyId(1).nodeId(NodeIds.of(NODE)).jobId(JOB)
                .timestamp(TIME);
    }

    private static ByteBuffer finish(ByteBuffer b) {
        int length = authenticator().sign(b, 0);
        return b.limit(length).position(0);
    }

    static String hex(ByteBuffer b) {
        byte[] bytes = new byte[b.remaining()];
        b.get(b.position(), bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /** Prints the examples as the hex dumps of the document. */
    public static void main(String[] args) {
        System.out.println("nodeId " + Long.toHexString(NodeIds.of(NODE)));
        for (ByteBuffer b : new ByteBuffer[] {exec(), execPlain(), pmiFence(), stageProbe(), environment(),
            execEnvironment(), send(), sendAck(), output(), outputAck(), status(), statusReply(),
            terminateReply(), recvEmpty(), recvTruncate(),
            terminateStop(), terminateInterim()}) {
            System.out.println(dump(b));
        }
    }

    /** Hex dump: 16 bytes a line, offset first, as in the document. */
    static String dump(ByteBuffer b) {
        String hex = hex(b);
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < hex.length(); i += 32) {
            s.append(String.format("%04x ", i / 2));
            for (int j = i; j < Math.min(i + 32, hex.length()); j += 2) {
                s.append(' ').append(hex, j, j + 2);
            }
            s.append('\n');
        }
        return s.toString();
    }
}
