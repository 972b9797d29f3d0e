package org.mpiproxy.protocol.pmi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** PMI-2's wire format and one rank's PMI-2 session over a job that is a map. */
class Pmi2SessionTest {

    private final Map<String, String> space = new HashMap<>(Map.of("PMI_process_mapping", "(vector,(0,2,2))"));
    private final Map<String, String> node = new HashMap<>();
    private final List<String> events = new ArrayList<>();
    private final Pmi2Session.Job job = new Pmi2Session.Job() {
        @Override
        public int size() {
            return 4;
        }

        @Override
        public String kvsName() {
            return "kvs_00000000000000ab";
        }

        @Override
        public String put(int rank, String key, String value) {
            events.add("put " + rank + " " + key + "=" + value);
            return space.putIfAbsent(key, value) == null ? null : "of key " + key + ", which is already set";
        }

        @Override
        public String get(String key) {
            return space.get(key);
        }

        @Override
        public String putNodeAttribute(String key, String value) {
            return node.putIfAbsent(key, value) == null ? null : "of key " + key + ", which is already set";
        }

        @Override
        public String nodeAttribute(String key) {
            return node.get(key);
        }

        @Override
        public void barrierIn(int rank) {
            events.add("fence " + rank);
        }

        @Override
        public void abort(int rank, int exitCode, String message) {
            events.add("abort " + rank + " " + exitCode + " " + message);
        }
    };
    private final Pmi2Session session = new Pmi2Session(2, job);

    /** @return the reply to a body sent with its length field, the length field checked and cut */
    private String reply(String body) {
        PmiSession.Reply r = session.onMessage(body);
        return unframe(r.reply());
    }

    private static String unframe(String wire) {
        if (wire.isEmpty()) {
            return wire;
        }
        int length = Pmi2Wire.length(wire.substring(0, Pmi2Wire.LENGTH_FIELD));
        String body = wire.substring(Pmi2Wire.LENGTH_FIELD);
        assertEquals(length, body.getBytes(java.nio.charset.StandardCharsets.UTF_8).length, wire);
        return body;
    }

    @Test
    void shouldFrameMessagesWithTheirLengthAndDoubleEverySemicolonOfAValue() {
        assertEquals("29    cmd=kvs-put;key=a;value=b;;c;", Pmi2Wire.format("kvs-put", "key", "a", "value", "b;c"));
        Pmi2Wire m = Pmi2Wire.parse("cmd=kvs-put;key=a;value=b;;c d=e;;;");
        assertEquals("kvs-put", m.command());
        assertEquals(Map.of("key", "a", "value", "b;c d=e;"), m.attributes());
        assertEquals(Pmi2Wire.parse("cmd=x;v=;;;;;").get("v"), ";;");
        assertEquals(28, Pmi2Wire.length("28    "));
        assertEquals(28, Pmi2Wire.length("    28"));
    }

    @Test
    void shouldRefuseWhatIsNotAPmi2MessageWithOneLine() {
        assertEquals("length field 'x28   ' is not a decimal number",
                assertThrows(IllegalArgumentException.class, () -> Pmi2Wire.length("x28   ")).getMessage());
        assertEquals("message of 0 bytes, not 1..8192",
                assertThrows(IllegalArgumentException.class, () -> Pmi2Wire.length("0     ")).getMessage());
        assertEquals("message of 99999 bytes, not 1..8192",
                assertThrows(IllegalArgumentException.class, () -> Pmi2Wire.length("99999 ")).getMessage());
        assertEquals("the value of key has no closing ';'",
                assertThrows(IllegalArgumentException.class, () -> Pmi2Wire.parse("cmd=a;key=b")).getMessage());
        assertEquals("message starts with 'key', not cmd=",
                assertThrows(IllegalArgumentException.class, () -> Pmi2Wire.parse("key=b;cmd=a;")).getMessage());
        assertEquals("'junk' is not key=value;",
                assertThrows(IllegalArgumentException.class, () -> Pmi2Wire.parse("cmd=a;junk")).getMessage());
        assertEquals("key key twice",
                assertThrows(IllegalArgumentException.class, () -> Pmi2Wire.parse("cmd=a;key=1;key=2;")).getMessage());
        assertEquals("message holds control character 0xa",
                assertThrows(IllegalArgumentException.class, () -> Pmi2Wire.parse("cmd=a;\n")).getMessage());
    }

    @Test
    void shouldAnswerAPmi2ClientsLifeAsAProcessManagerDoes() {
        assertEquals("cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=2;size=4;appnum=0;"
                + "debugged=FALSE;pmiverbose=FALSE;", unframe(session.fullinitResponse(
                        Pmi2Wire.parse("cmd=fullinit;srcid=77;threaded=FALSE;"))));
        assertEquals("cmd=job-getid-response;rc=0;jobid=kvs_00000000000000ab;", reply("cmd=job-getid;"));
        assertEquals("cmd=kvs-put-response;rc=0;", reply("cmd=kvs-put;key=card-2;value=tcp 2;;x;"));
        assertEquals(List.of("put 2 card-2=tcp 2;x"), events);
        assertEquals("", reply("cmd=kvs-fence;"));
        assertTrue(session.inBarrier());
        assertEquals("fence 2", events.get(1));
        assertEquals("cmd=kvs-fence-response;rc=0;", unframe(session.barrierOut()));
        assertFalse(session.inBarrier());
        assertEquals("cmd=kvs-get-response;rc=0;found=TRUE;value=tcp 2;;x;",
                reply("cmd=kvs-get;jobid=kvs_00000000000000ab;srcid=2;key=card-2;"));
        assertEquals("cmd=kvs-get-response;rc=0;found=FALSE;", reply("cmd=kvs-get;jobid=;srcid=-1;key=-NONEXIST-KEY;"));
        assertEquals("cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,2,2));",
                reply("cmd=info-getjobattr;key=PMI_process_mapping;"));
        assertEquals("cmd=info-getjobattr-response;rc=0;found=TRUE;value=4;",
                reply("cmd=info-getjobattr;key=universeSize;"));
        assertEquals("cmd=info-getjobattr-response;rc=0;found=FALSE;",
                reply("cmd=info-getjobattr;key=PMI_hwloc_xmlfile;"));
        PmiSession.Reply end = session.onMessage("cmd=finalize;thrid=0x1;");
        assertEquals("cmd=finalize-response;rc=0;thrid=0x1;", unframe(end.reply()), "a thrid comes back");
        assertTrue(end.close());
        assertTrue(session.finalized());
    }

    @Test
    void shouldAnswerANodeAttributeAtOnceOrOnceARankOfTheNodePutsIt() {
        assertEquals("cmd=info-getnodeattr-response;rc=0;found=FALSE;",
                reply("cmd=info-getnodeattr;key=shm;wait=FALSE;"));
        assertEquals("", reply("cmd=info-getnodeattr;key=shm;wait=TRUE;"), "waits");
        assertEquals("", session.nodeAttributeSet(), "nothing put yet");
        PmiSession.Reply meanwhile = session.onMessage("cmd=job-getid;");
        assertEquals("cmd=job-getid while the rank waits for node attribute shm", meanwhile.problem());
        node.put("shm", "segment 7");
        assertEquals("cmd=info-getnodeattr-response;rc=0;found=TRUE;value=segment 7;",
                unframe(session.nodeAttributeSet()));
        assertEquals("", session.nodeAttributeSet(), "answered once");
        assertEquals("cmd=info-putnodeattr-response;rc=0;", reply("cmd=info-putnodeattr;key=k;value=v;"));
        assertEquals("info-putnodeattr of key k, which is already set",
                session.onMessage("cmd=info-putnodeattr;key=k;value=w;").problem());
        assertEquals("cmd=info-getnodeattr-response;rc=0;found=TRUE;value=v;",
                reply("cmd=info-getnodeattr;key=k;wait=TRUE;"));
    }

    @Test
    void shouldAnswerBadInputWithRcMinusOneAndAProblemAndGoOn() {
        PmiSession.Reply garbage = session.onMessage("cmd=kvs-put;key");
        assertEquals("malformed message: 'key' is not key=value;", garbage.problem());
        assertEquals("cmd=error;rc=-1;errmsg=malformed message: 'key' is not key=value;;;", unframe(garbage.reply()));
        assertFalse(garbage.close());
        assertEquals("kvs-put key of 65 bytes, not 1..64",
                session.onMessage("cmd=kvs-put;key=" + "k".repeat(65) + ";value=1;").problem());
        assertEquals("kvs-put value of 1025 bytes, more than 1024",
                session.onMessage("cmd=kvs-put;key=k;value=" + "v".repeat(1025) + ";").problem());
        assertEquals("kvs-put without key= or value=", session.onMessage("cmd=kvs-put;key=k;").problem());
        assertEquals("cmd=kvs-put-response;rc=0;", reply("cmd=kvs-put;key=k;value=v;"));
        PmiSession.Reply twice = session.onMessage("cmd=kvs-put;key=k;value=w;");
        assertEquals("kvs-put of key k, which is already set", twice.problem());
        assertTrue(unframe(twice.reply()).startsWith("cmd=kvs-put-response;rc=-1;errmsg="), twice.reply());
        assertEquals("kvs-get for job kvs_other, not this job's kvs_00000000000000ab",
                session.onMessage("cmd=kvs-get;jobid=kvs_other;key=k;").problem());
        assertEquals("info-getnodeattr wait=MAYBE, not TRUE or FALSE",
                session.onMessage("cmd=info-getnodeattr;key=k;wait=MAYBE;").problem());
        assertEquals("a second fullinit", session.onMessage("cmd=fullinit;pmiid=1;").problem());
        assertEquals("unknown command cmd=name-publish",
                session.onMessage("cmd=name-publish;name=a;port=b;").problem());
        assertEquals("MPI_Comm_spawn refused: spawning processes is not supported",
                session.onMessage("cmd=spawn;ncmds=1;").problem());
        assertEquals("", reply("cmd=kvs-fence;"));
        assertEquals("cmd=kvs-fence while the rank waits for the fence", session.onMessage("cmd=kvs-fence;").problem());
        assertEquals("v", space.get("k"), "nothing was lost");
        assertEquals("cmd=kvs-put while the rank waits for the fence",
                session.onMessage("cmd=kvs-put;key=x;value=y;").problem());
        assertNull(space.get("x"));
    }

    @Test
    void shouldPassAnAbortOnWithItsMessageAndEndTheConnection() {
        PmiSession.Reply r = session.onMessage("cmd=abort;isworld=TRUE;msg=application called MPI_Abort;");
        assertTrue(r.close());
        assertEquals(List.of("abort 2 1 application_called_MPI_Abort"), events);
    }

    @Test
    void shouldRelayAPutAPmi1LineCannotCarryEncoded() {
        assertEquals("cmd=put key=a value=b", PmiLine.putLine("a", "b"));
        String line = PmiLine.putLine("card 2", "tcp 2;x=%");
        assertEquals("cmd=put encoding=url key=card+2 value=tcp+2%3Bx%3D%25", line);
        assertEquals(Map.entry("card 2", "tcp 2;x=%"), PmiLine.putOf(PmiLine.parse(line)));
        assertEquals(Map.entry("a", "b"), PmiLine.putOf(PmiLine.parse("cmd=put key=a value=b")));
        assertEquals("put with encoding=rot13, not url", assertThrows(IllegalArgumentException.class,
                () -> PmiLine.putOf(PmiLine.parse("cmd=put encoding=rot13 key=a value=b"))).getMessage());
    }
}
