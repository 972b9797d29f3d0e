package org.mpiproxy.protocol.pmi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** The PMI-2 exchange of docs/protocol-v2.md 5.7, byte for byte, against a session. */
class Pmi2DocumentTest {

    @Test
    void shouldAnswerTheDocumentsExampleAsItSays() throws Exception {
        String doc = Files.readString(Path.of("../../docs/protocol-v2.md"), StandardCharsets.UTF_8);
        int marker = doc.indexOf("<!-- pmi2-example -->");
        assertTrue(marker >= 0, "the example's marker");
        int start = doc.indexOf("```\n", marker) + 4;
        List<String> lines = doc.substring(start, doc.indexOf("```", start)).lines().toList();
        assertEquals(16, lines.size(), lines.toString());

        Map<String, String> space = new HashMap<>(Map.of("PMI_process_mapping", "(vector,(0,1,4))", "card-0", "tcp 0"));
        Map<String, String> node = new HashMap<>(Map.of("shm", "segment 0"));
        List<String> barriers = new ArrayList<>();
        Pmi2Session session = new Pmi2Session(1, new Pmi2Session.Job() {
            @Override
            public int size() {
                return 4;
            }

            @Override
            public String kvsName() {
                return PmiServer.kvsName(0xab);
            }

            @Override
            public String put(int rank, String key, String value) {
                return space.putIfAbsent(key, value) == null ? null : "set";
            }

            @Override
            public String get(String key) {
                return space.get(key);
            }

            @Override
            public String putNodeAttribute(String key, String value) {
                return node.putIfAbsent(key, value) == null ? null : "set";
            }

            @Override
            public String nodeAttribute(String key) {
                return node.get(key);
            }

            @Override
            public void barrierIn(int rank) {
                barriers.add("rank " + rank);
            }

            @Override
            public void abort(int rank, int exitCode, String message) {
                throw new AssertionError("no abort in the example");
            }
        });
        for (int i = 0; i < lines.size(); i += 2) {
            String request = lines.get(i);
            String reply = lines.get(i + 1);
            assertTrue(request.startsWith("> ") && reply.startsWith("< "), request + " / " + reply);
            String body = wire(request.substring(2));
            String answer;
            if (body.startsWith("cmd=fullinit;")) {
                answer = session.fullinitResponse(Pmi2Wire.parse(body));
            } else {
                PmiSession.Reply r = session.onMessage(body);
                assertEquals(null, r.problem(), request);
                // a fence is answered once every rank entered it: here at once
                answer = session.inBarrier() ? session.barrierOut() : r.reply();
            }
            assertEquals(reply.substring(2), answer, request);
        }
        assertEquals(List.of("rank 1"), barriers);
        assertEquals("tcp 1;x", space.get("card-1"));
        assertTrue(session.finalized());
    }

    /** @return the body of a message as the document shows it, its length field checked */
    private static String wire(String shown) {
        String body = shown.substring(Pmi2Wire.LENGTH_FIELD);
        assertEquals(Pmi2Wire.length(shown.substring(0, Pmi2Wire.LENGTH_FIELD)),
                body.getBytes(StandardCharsets.UTF_8).length, shown);
        return body;
    }
}
