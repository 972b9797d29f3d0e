package org.mpiproxy.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The hex dumps of docs/protocol-v2.md, checked against the codec. */
class V2DocumentExamplesTest {

    private static final Pattern BLOCK = Pattern.compile("```hex example=([a-z-]+)\\n(.*?)```", Pattern.DOTALL);
    private static Map<String, String> examples;

    @BeforeAll
    static void readDocument() throws IOException {
        String doc = Files.readString(Path.of("../../docs/protocol-v2.md"), StandardCharsets.UTF_8);
        examples = new HashMap<>();
        Matcher m = BLOCK.matcher(doc);
        while (m.find()) {
            StringBuilder hex = new StringBuilder();
            for (String line : m.group(2).split("\n")) {
                String body = line.strip();
                if (!body.isEmpty()) {
                    hex.append(body.substring(4).replace(" ", ""));
                }
            }
            examples.put(m.group(1), hex.toString());
        }
    }

    private static ByteBuffer documented(String name) {
        String hex = examples.get(name);
        assertTrue(hex != null, "the document has no example " + name);
        byte[] bytes = HexFormat.of().parseHex(hex);
        ByteBuffer b = ByteBuffer.allocate(bytes.length + 16).order(ByteOrder.BIG_ENDIAN);
        b.put(0, bytes);
        return b.limit(bytes.length);
    }

    @Test
    void shouldEncodeExecExactlyAsDocumented() {
        assertEquals(examples.get("exec"), V2Examples.hex(V2Examples.exec()));
    }

    @Test
    void shouldEncodePlainExecExactlyAsDocumented() {
        assertEquals(examples.get("exec-plain"), V2Examples.hex(V2Examples.execPlain()));
        ByteBuffer b = documented("exec-plain");
        assertEquals(V2Authenticator.OK, V2Examples.authenticator().verify(b, 0, b.limit(), V2Examples.TIME));
        V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(b, 0);
        ExecCommand c = ExecCommand.parsePlain(b, h.payloadOffset(), h.payloadLength());
        assertEquals("hostname", c.program());
        assertEquals(java.util.List.of("-s"), c.args());
        assertEquals(Map.of("OMP_NUM_THREADS", "4"), c.environment());
        assertEquals(40000, h.tag());
    }

    @Test
    void shouldEncodePmiFenceExactlyAsDocumented() {
        assertEquals(examples.get("pmi-fence"), V2Examples.hex(V2Examples.pmiFence()));
        ByteBuffer b = documented("pmi-fence");
        assertEquals(V2Authenticator.OK, V2Examples.authenticator().verify(b, 0, b.limit(), V2Examples.TIME));
        V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(b, 0);
        Map<String, String> pairs = new HashMap<>();
        org.mpiproxy.protocol.pmi.PmiSpace.decode(b, h.payloadOffset(), h.payloadLength(), pairs);
        assertEquals(Map.of("card-1", "tcp#1"), pairs);
        assertEquals(1, h.argument());
        assertEquals(1, h.ack());
    }

    @Test
    void shouldEncodeStageProbeExactlyAsDocumented() {
        assertEquals(examples.get("stage-probe"), V2Examples.hex(V2Examples.stageProbe()));
        ByteBuffer b = documented("stage-probe");
        assertEquals(V2Authenticator.OK, V2Examples.authenticator().verify(b, 0, b.limit(), V2Examples.TIME));
        V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(b, 0);
        assertEquals(V2HeaderDescriptor.OP_STAGE, h.operation());
        assertEquals(0, h.ack(), "a probe");
        assertEquals(1312, h.tag());
    }

    @Test
    void shouldEncodeEnvironmentAndTheExecNamingItExactlyAsDocumented() {
        assertEquals(examples.get("environment"), V2Examples.hex(V2Examples.environment()));
        assertEquals(examples.get("exec-environment"), V2Examples.hex(V2Examples.execEnvironment()));
        ByteBuffer fragment = documented("environment");
        assertEquals(V2Authenticator.OK, V2Examples.authenticator().verify(fragment, 0, fragment.limit(),
                V2Examples.TIME));
        V2HeaderFlyweight f = new V2HeaderFlyweight().wrap(fragment, 0);
        assertEquals(V2HeaderDescriptor.OP_ENVIRONMENT, f.operation());
        byte[] digest = new byte[ExecEnvironment.DIGEST_LENGTH];
        fragment.get(f.payloadOffset(), digest);
        byte[] variables = new byte[f.payloadLength() - digest.length];
        fragment.get(f.payloadOffset() + digest.length, variables);
        assertEquals(Map.of("OMP_NUM_THREADS", "4"), ExecEnvironment.decode(variables));
        assertEquals(HexFormat.of().formatHex(ExecEnvironment.digest(variables)), HexFormat.of().formatHex(digest));
        assertEquals(variables.length, f.argument());

        ByteBuffer b = documented("exec-environment");
        assertEquals(V2Authenticator.OK, V2Examples.authenticator().verify(b, 0, b.limit(), V2Examples.TIME));
        V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(b, 0);
        assertEquals(0x2c, h.flags(), "OUTPUT, PLAIN and ENVIRONMENT");
        byte[] named = new byte[ExecEnvironment.DIGEST_LENGTH];
        b.get(h.payloadOffset(), named);
        assertEquals(HexFormat.of().formatHex(digest), HexFormat.of().formatHex(named));
        ExecCommand c = ExecCommand.parsePlain(b, h.payloadOffset() + named.length, h.payloadLength() - named.length);
        assertEquals("hostname", c.program());
        assertEquals(Map.of(), c.environment());
    }

    @Test
    void shouldEncodeSendExactlyAsDocumented() {
        assertEquals(examples.get("send"), V2Examples.hex(V2Examples.send()));
    }

    @Test
    void shouldEncodeSendAckExactlyAsDocumented() {
        assertEquals(examples.get("send-ack"), V2Examples.hex(V2Examples.sendAck()));
    }

    @Test
    void shouldDecodeDocumentedExecFields() {
        ByteBuffer b = documented("exec");
        V2Authenticator auth = V2Examples.authenticator();
        assertEquals(V2Authenticator.OK, auth.verify(b, 0, b.limit(), V2Examples.TIME));
        V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(b, 0);
        assertEquals(V2HeaderDescriptor.MAGIC, h.magic());
        assertEquals(V2HeaderDescriptor.OP_EXEC, h.operation());
        assertEquals(0, h.flags());
        assertEquals(1, h.keyId());
        assertEquals(0x0474205af00f5766L, h.nodeId());
        assertEquals(V2Examples.JOB, h.jobId());
        assertEquals(1, h.rank());
        assertEquals(2, h.argument());
        assertEquals(0, h.core());
        assertEquals(V2Examples.TIME, h.timestamp());
        assertEquals(0x1122334455667788L, h.nonce());
        assertEquals(7, h.payloadLength());
        assertEquals(79, h.macOffset());
        assertEquals("mpiping", ExecCommand.parse(b, h.payloadOffset(), h.payloadLength()).toCommandLine());
    }

    @Test
    void shouldDecodeDocumentedSendAndAck() {
        ByteBuffer send = documented("send");
        V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(send, 0);
        assertEquals(V2Authenticator.OK, V2Examples.authenticator().verify(send, 0, send.limit(), V2Examples.TIME));
        assertEquals(V2HeaderDescriptor.FLAG_END_OF_MESSAGE, h.flags());
        assertEquals(MpiDatatype.INT.code(), h.datatype());
        assertEquals(7, h.tag());
        assertEquals(2, h.argument());
        assertEquals(1, send.order(ByteOrder.LITTLE_ENDIAN).getInt(72));
        assertEquals(2, send.getInt(76));

        ByteBuffer ack = documented("send-ack");
        h.wrap(ack, 0);
        assertEquals(V2Authenticator.OK,
                V2Examples.authenticator().verifyReply(ack, 0, ack.limit(), V2Examples.TIME));
        assertEquals(V2HeaderDescriptor.FLAG_REPLY, h.flags());
        assertEquals(1, h.ack());
        assertEquals(64, h.argument());
        assertEquals(0, h.payloadLength());
    }

    @Test
    void shouldEncodeOutputAndItsAckExactlyAsDocumented() {
        assertEquals(examples.get("output"), V2Examples.hex(V2Examples.output()));
        assertEquals(examples.get("output-ack"), V2Examples.hex(V2Examples.outputAck()));
    }

    @Test
    void shouldDecodeDocumentedOutputAndAck() {
        ByteBuffer output = documented("output");
        V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(output, 0);
        assertEquals(V2Authenticator.OK,
                V2Examples.authenticator().verifyReply(output, 0, output.limit(), V2Examples.TIME));
        assertEquals(V2HeaderDescriptor.OP_OUTPUT, h.operation());
        assertEquals(V2HeaderDescriptor.FLAG_REPLY | V2HeaderDescriptor.FLAG_END_OF_MESSAGE, h.flags());
        assertEquals(V2HeaderDescriptor.STREAM_STDERR, h.tag());
        assertEquals(5, h.sequence());
        assertEquals(0, h.ack());
        assertEquals(0, h.argument() & V2HeaderDescriptor.OUTPUT_PARTIAL);
        byte[] text = new byte[h.payloadLength()];
        output.get(V2HeaderDescriptor.HEADER_LENGTH, text);
        assertEquals("done: 42", new String(text, StandardCharsets.UTF_8));

        ByteBuffer ack = documented("output-ack");
        h.wrap(ack, 0);
        assertEquals(V2Authenticator.OK, V2Examples.authenticator().verify(ack, 0, ack.limit(), V2Examples.TIME,
                false));
        assertEquals(V2HeaderDescriptor.OP_OUTPUT, h.operation());
        assertEquals(0, h.flags());
        assertEquals(V2HeaderDescriptor.STREAM_STDERR, h.tag());
        assertEquals(6, h.ack());
        assertEquals(0, h.payloadLength());
    }

    @Test
    void shouldEncodeTheTerminateReplyWithTheRanksCoreExactlyAsDocumented() {
        assertEquals(examples.get("terminate-reply"), V2Examples.hex(V2Examples.terminateReply()));
        ByteBuffer b = documented("terminate-reply");
        assertEquals(V2Authenticator.OK, V2Examples.authenticator().verifyReply(b, 0, b.limit(), V2Examples.TIME));
        V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(b, 0);
        assertEquals(V2HeaderDescriptor.OP_TERMINATE, h.operation());
        assertEquals(3, h.argument());
        assertEquals(3, h.core(), "a reply about a rank carries its core");
    }

    @Test
    void shouldEncodeTheEmptyAndTheTruncateRecvRepliesExactlyAsDocumented() {
        assertEquals(examples.get("recv-empty"), V2Examples.hex(V2Examples.recvEmpty()));
        assertEquals(examples.get("recv-truncate"), V2Examples.hex(V2Examples.recvTruncate()));
        ByteBuffer empty = documented("recv-empty");
        assertEquals(V2Authenticator.OK,
                V2Examples.authenticator().verifyReply(empty, 0, empty.limit(), V2Examples.TIME));
        V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(empty, 0);
        assertEquals(MpiErrors.SUCCESS, h.result());
        assertEquals(4, h.sequence());
        assertEquals(0, h.argument());
        assertEquals(V2HeaderDescriptor.FLAG_REPLY, h.flags());
        assertEquals(0, h.payloadLength());
        ByteBuffer truncate = documented("recv-truncate");
        h.wrap(truncate, 0);
        assertEquals(MpiErrors.ERR_TRUNCATE, h.result());
        assertEquals(4, h.sequence());
        assertEquals(0, h.argument());
    }

    @Test
    void shouldDocumentTheNodeIdOfTheExampleNode() {
        assertEquals(0x0474205af00f5766L, NodeIds.of("node-a"));
    }

    @Test
    void shouldEncodeStatusAndItsReplyExactlyAsDocumented() {
        assertEquals(examples.get("status"), V2Examples.hex(V2Examples.status()));
        assertEquals(examples.get("status-reply"), V2Examples.hex(V2Examples.statusReply()));
    }

    @Test
    void shouldDecodeDocumentedStatusReplyEntries() {
        ByteBuffer request = documented("status");
        assertEquals(V2Authenticator.OK, V2Examples.authenticator().verify(request, 0, request.limit(), V2Examples.TIME));
        assertEquals(V2HeaderDescriptor.OP_STATUS, new V2HeaderFlyweight().wrap(request, 0).operation());
        ByteBuffer reply = documented("status-reply").order(ByteOrder.LITTLE_ENDIAN);
        V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(reply, 0);
        assertEquals(V2Authenticator.OK,
                V2Examples.authenticator().verifyReply(reply, 0, reply.limit(), V2Examples.TIME));
        assertEquals(V2HeaderDescriptor.OP_STATUS, h.operation());
        assertEquals(2, h.argument());
        assertEquals(0, h.ack());
        assertEquals(2 * V2StatusDescriptor.ENTRY_LENGTH, h.payloadLength());
        int second = V2HeaderDescriptor.HEADER_LENGTH + V2StatusDescriptor.ENTRY_LENGTH;
        assertEquals(1, V2StatusDescriptor.rank(reply, V2HeaderDescriptor.HEADER_LENGTH));
        assertEquals("running", V2StatusDescriptor.stateName(V2StatusDescriptor.state(reply, V2HeaderDescriptor.HEADER_LENGTH)));
        assertEquals(4242, V2StatusDescriptor.pid(reply, V2HeaderDescriptor.HEADER_LENGTH));
        assertEquals(-1, V2StatusDescriptor.exitStatus(reply, V2HeaderDescriptor.HEADER_LENGTH));
        assertEquals(2, V2StatusDescriptor.rank(reply, second));
        assertEquals(V2StatusDescriptor.STATE_FINISHED, V2StatusDescriptor.state(reply, second));
        assertEquals(1, V2StatusDescriptor.core(reply, second));
        assertEquals(4243, V2StatusDescriptor.pid(reply, second));
        assertEquals(137, V2StatusDescriptor.exitStatus(reply, second));
    }

    @Test
    void shouldEncodeTerminateWithStopAndTheInterimReplyExactlyAsDocumented() {
        assertEquals(examples.get("terminate-stop"), V2Examples.hex(V2Examples.terminateStop()));
        assertEquals(examples.get("terminate-interim"), V2Examples.hex(V2Examples.terminateInterim()));
    }

    @Test
    void shouldDecodeDocumentedTerminateStopAndInterimReply() {
        ByteBuffer request = documented("terminate-stop");
        assertEquals(V2Authenticator.OK, V2Examples.authenticator().verify(request, 0, request.limit(), V2Examples.TIME));
        V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(request, 0);
        assertEquals(V2HeaderDescriptor.OP_TERMINATE, h.operation());
        assertEquals(0, h.flags());
        assertEquals(1, h.rank());
        assertEquals(V2HeaderDescriptor.TERMINATE_STOP, h.argument());
        assertEquals(0, h.payloadLength());

        ByteBuffer reply = documented("terminate-interim").order(ByteOrder.LITTLE_ENDIAN);
        h.wrap(reply, 0);
        assertEquals(V2Authenticator.OK,
                V2Examples.authenticator().verifyReply(reply, 0, reply.limit(), V2Examples.TIME));
        // the operation tells the interim reply from the final TERMINATE reply
        assertEquals(V2HeaderDescriptor.OP_STATUS, h.operation());
        assertEquals(V2HeaderDescriptor.FLAG_REPLY, h.flags());
        assertEquals(1, h.rank());
        assertEquals(1, h.argument());
        assertEquals(V2StatusDescriptor.ENTRY_LENGTH, h.payloadLength());
        assertEquals(1, V2StatusDescriptor.rank(reply, V2HeaderDescriptor.HEADER_LENGTH));
        assertEquals(V2StatusDescriptor.STATE_TERMINATING, V2StatusDescriptor.state(reply, V2HeaderDescriptor.HEADER_LENGTH));
        assertEquals(4242, V2StatusDescriptor.pid(reply, V2HeaderDescriptor.HEADER_LENGTH));
        assertEquals(-1, V2StatusDescriptor.exitStatus(reply, V2HeaderDescriptor.HEADER_LENGTH));
    }

    @Test
    void shouldRefuseTheDocumentedStatusUnderAnotherKeyExactlyAsDocumented() {
        ByteBuffer request = documented("status").order(ByteOrder.LITTLE_ENDIAN);
        V2Authenticator otherProxy = new V2Authenticator(ClusterKeys.of(Map.of(1, new byte[32]), 1),
                NodeIds.of(V2Examples.NODE), 30_000, 16);
        int result = otherProxy.verify(request, 0, request.limit(), V2Examples.TIME);
        assertEquals(V2Authenticator.BAD_MAC, result);
        ByteBuffer refusal = ByteBuffer.allocate(V2RefusalDescriptor.LENGTH);

        int length = V2RefusalDescriptor.put(request, 0, V2RefusalDescriptor.reasonOf(result), refusal, 0);

        assertEquals(examples.get("refusal"), V2Examples.hex(refusal.limit(length)));
        ByteBuffer documented = documented("refusal");
        assertTrue(V2RefusalDescriptor.isRefusal(documented, 0, documented.limit()));
        assertEquals(V2RefusalDescriptor.REASON_NOT_VERIFIED, V2RefusalDescriptor.reason(documented, 0));
        assertEquals(1, V2RefusalDescriptor.keyId(documented, 0));
        assertEquals(0x112233445566778bL, V2RefusalDescriptor.nonce(documented, 0));
        assertEquals(V2Authenticator.TOO_SHORT, V2Examples.authenticator().verifyReply(documented, 0,
                documented.limit(), V2Examples.TIME), "no reply can be taken for a refusal, nor a refusal for a request");
    }

    @Test
    void shouldRefuseTheDocumentedStatusAsBusyExactlyAsDocumentedWhenItsSourceHoldsItsShare() {
        ByteBuffer request = documented("status").order(ByteOrder.LITTLE_ENDIAN);
        V2Authenticator proxy = new V2Authenticator(V2Examples.keys(), NodeIds.of(V2Examples.NODE), 30_000, 1024, 1);
        long source = 0x1_0a00_0001L;
        ByteBuffer earlier = V2Examples.exec();
        assertEquals(V2Authenticator.OK, proxy.verify(earlier, 0, earlier.limit(), V2Examples.TIME, true, source));
        int result = proxy.verify(request, 0, request.limit(), V2Examples.TIME + 4, true, source);
        assertEquals(V2Authenticator.REPLAY_SOURCE_FULL, result);
        ByteBuffer refusal = ByteBuffer.allocate(V2RefusalDescriptor.LENGTH);

        int length = V2RefusalDescriptor.put(request, 0, V2RefusalDescriptor.reasonOf(result), refusal, 0);

        assertEquals(examples.get("refusal-busy"), V2Examples.hex(refusal.limit(length)));
        ByteBuffer documented = documented("refusal-busy");
        assertTrue(V2RefusalDescriptor.isRefusal(documented, 0, documented.limit()));
        assertEquals(V2RefusalDescriptor.REASON_BUSY, V2RefusalDescriptor.reason(documented, 0));
        assertTrue(V2RefusalDescriptor.isRetryable(V2RefusalDescriptor.reason(documented, 0)));
        assertEquals(0x112233445566778bL, V2RefusalDescriptor.nonce(documented, 0));
        assertEquals(V2Authenticator.OK, proxy.verify(request, 0, request.limit(), V2Examples.TIME + 4, true, source + 1),
                "the refused nonce was not remembered: sent again (here from another source) it is served");
    }
}
