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

class PmiSessionTest {

    /** A job of 4 ranks whose space is a map; records barrier entries and aborts. */
    private final Map<String, String> space = new HashMap<>();
    private final List<String> events = new ArrayList<>();
    private final PmiSession.Job job = new PmiSession.Job() {
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
            return space.putIfAbsent(key, value) == null ? null : "of key " + key + ", which is already set";
        }

        @Override
        public String get(String key) {
            return space.get(key);
        }

        @Override
        public void barrierIn(int rank) {
            events.add("barrier " + rank);
        }

        @Override
        public void abort(int rank, int exitCode, String message) {
            events.add("abort " + rank + " " + exitCode + " " + message);
        }
    };
    private final PmiSession session = new PmiSession(2, job);

    private String reply(String line) {
        PmiSession.Reply r = session.onLine(line);
        return r.reply();
    }

    @Test
    void shouldAnswerMpichsStartupAsAProcessManagerDoes() {
        assertEquals("cmd=initack rc=0\ncmd=set size=4\ncmd=set rank=2\ncmd=set debug=0\n", session.handshake());
        assertEquals("cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n",
                reply("cmd=init pmi_version=1 pmi_subversion=1"));
        assertEquals("cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024 rc=0\n", reply("cmd=get_maxes"));
        assertEquals("cmd=appnum appnum=0 rc=0\n", reply("cmd=get_appnum"));
        assertEquals("cmd=my_kvsname kvsname=kvs_00000000000000ab rc=0\n", reply("cmd=get_my_kvsname"));
        assertEquals("cmd=universe_size size=4 rc=0\n", reply("cmd=get_universe_size"));
        assertEquals("cmd=put_result rc=0\n", reply("cmd=put kvsname=kvs_00000000000000ab key=P2-businesscard"
                + " value=description#host$port#4711$"));
        assertEquals("", reply("cmd=barrier_in"));
        assertTrue(session.inBarrier());
        assertEquals(List.of("barrier 2"), events);
        assertEquals("cmd=barrier_out rc=0\n", session.barrierOut());
        assertFalse(session.inBarrier());
        assertEquals("cmd=get_result rc=0 value=description#host$port#4711$\n",
                reply("cmd=get kvsname=kvs_00000000000000ab key=P2-businesscard"));
        PmiSession.Reply end = session.onLine("cmd=finalize");
        assertEquals("cmd=finalize_ack rc=0\n", end.reply());
        assertTrue(end.close());
        assertTrue(session.finalized());
    }

    @Test
    void shouldAnswerBadInputWithThePmiErrorReplyAndAProblemAndGoOn() {
        reply("cmd=init pmi_version=1 pmi_subversion=1");
        PmiSession.Reply again = session.onLine("cmd=init pmi_version=1 pmi_subversion=1");
        assertEquals("cmd=response_to_init rc=-1 msg=a_second_init\n", again.reply());
        assertEquals("a second init", again.problem());
        assertFalse(again.close());

        PmiSession.Reply garbage = session.onLine("hello world");
        assertEquals("malformed line: 'hello' is not key=value", garbage.problem());
        assertTrue(garbage.reply().startsWith("cmd=error rc=-1 msg=malformed_line"), garbage.reply());

        PmiSession.Reply longKey = session.onLine("cmd=put key=" + "k".repeat(65) + " value=1");
        assertEquals("put key of 65 characters, not 1..64", longKey.problem());
        assertEquals("cmd=put_result rc=-1 msg=put_key_of_65_characters,_not_1..64\n", longKey.reply());
        assertEquals("put value of 1025 characters, more than 1024",
                session.onLine("cmd=put key=k value=" + "v".repeat(1025)).problem());
        assertEquals("put for key-value space other, not this job's kvs_00000000000000ab",
                session.onLine("cmd=put kvsname=other key=k value=v").problem());
        assertEquals("cmd=put_result rc=0\n", reply("cmd=put key=k value=v"));
        assertEquals("put of key k, which is already set", session.onLine("cmd=put key=k value=w").problem());

        PmiSession.Reply missing = session.onLine("cmd=get key=absent");
        assertEquals("cmd=get_result rc=-1 msg=key_absent_not_found\n", missing.reply());
        assertNull(missing.problem(), "asking for a key nobody put is normal");

        assertEquals("unknown command cmd=frobnicate", session.onLine("cmd=frobnicate").problem());
        assertEquals("", reply("cmd=barrier_in"));
        assertEquals("barrier_in while already in the barrier", session.onLine("cmd=barrier_in").problem());
        assertEquals("v", space.get("k"), "nothing was lost");
    }

    @Test
    void shouldRefuseSpawnAfterItsLastLine() {
        assertEquals("", reply("mcmd=spawn"));
        assertEquals("", reply("nprocs=2"));
        assertEquals("", reply("execname=/bin/true"));
        PmiSession.Reply r = session.onLine("endcmd");
        assertEquals("cmd=spawn_result rc=-1 errmsg=spawn_is_not_supported\n", r.reply());
        assertEquals("MPI_Comm_spawn refused: spawning processes is not supported", r.problem());
        assertEquals("cmd=appnum appnum=0 rc=0\n", reply("cmd=get_appnum"), "the connection goes on");
    }

    @Test
    void shouldPassAnAbortOnAndEndTheConnection() {
        PmiSession.Reply r = session.onLine("cmd=abort exitcode=3 message=bad_input");
        assertTrue(r.close());
        assertEquals(List.of("abort 2 3 bad_input"), events);
    }

    @Test
    void shouldParseLinesAndRefuseWhatIsNotALine() {
        PmiLine line = PmiLine.parse("cmd=put  kvsname=k\tkey=a value=b=c ");
        assertEquals("put", line.command());
        assertEquals(Map.of("kvsname", "k", "key", "a", "value", "b=c"), line.attributes());
        assertEquals("line of 4096 characters, more than 4095",
                assertThrows(IllegalArgumentException.class, () -> PmiLine.parse("x".repeat(4096))).getMessage());
        assertEquals("line starts with 'key', not cmd= or mcmd=",
                assertThrows(IllegalArgumentException.class, () -> PmiLine.parse("key=1 cmd=put")).getMessage());
        assertEquals("empty line", assertThrows(IllegalArgumentException.class, () -> PmiLine.parse("  ")).getMessage());
        assertEquals("line holds control character 0x1",
                assertThrows(IllegalArgumentException.class, () -> PmiLine.parse("cmd=a\u0001")).getMessage());
    }
}
