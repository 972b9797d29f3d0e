package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StateCodecTest {

    @TempDir
    Path temp;

    private static byte[] encode(StateCodec codec, Object value) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            codec.write(out, value, "state");
        }
        return bytes.toByteArray();
    }

    private static Object decode(byte[] bytes) throws IOException {
        return new StateCodec().read(new DataInputStream(new ByteArrayInputStream(bytes)));
    }

    @Test
    void shouldKeepEveryValueAJobIsMadeOfAndLeaveOutHandles() throws Exception {
        Map<String, Object> rank = new LinkedHashMap<>();
        rank.put("rankId", 3);
        rank.put("pid", 4242L);
        rank.put("stopped", true);
        rank.put("held", new byte[] {1, 2, 3});
        rank.put("window", new long[] {7, 8});
        rank.put("counts", new int[] {9});
        rank.put("ratio", 0.5);
        rank.put("flags", (short) 2);
        rank.put("exit", new CompletableFuture<Integer>());
        rank.put("execReason", null);
        Map<String, Object> job = new LinkedHashMap<>();
        job.put("jobId", 0x1234_5678_9abc_def0L);
        job.put("owner", new InetSocketAddress(InetAddress.getByName("127.0.0.9"), 40000));
        job.put("started", Instant.parse("2026-12-06T21:00:00.123456789Z"));
        job.put("logDirectory", Path.of("/var/log/mpiproxy/job-1"));
        List<Object> finished = new ArrayList<>();
        finished.add(new Object[] {new long[] {1, 0, 7, 0}, "exited"});
        job.put("finished", finished);
        job.put("ranks", new ArrayList<>(List.of(rank)));
        job.put("ids", Set.of(5L));
        org.mpiproxy.api.RankInfo info = new org.mpiproxy.api.RankInfo(2, 1, "mpiprime", 77, org.mpiproxy.api.RankInfo.State.EXITED,
                3, 10, 20, 0, 1);
        job.put("history", new ArrayList<>(List.of(new org.mpiproxy.api.JobInfo(9, "v2", "host:1",
                Instant.EPOCH, List.of(info)))));
        Map<String, Object> state = new LinkedHashMap<>();
        state.put("jobs", new ArrayList<>(List.of(job)));
        state.put("pmi", new Object());

        StateCodec codec = new StateCodec();
        @SuppressWarnings("unchecked")
        Map<String, Object> back = (Map<String, Object>) decode(encode(codec, state));

        assertTrue(codec.dropped().contains("state.pmi (Object)"), codec.dropped().toString());
        assertTrue(codec.dropped().stream().anyMatch(d -> d.contains("exit (CompletableFuture)")), codec.dropped().toString());
        assertEquals(Set.of("jobs"), back.keySet(), "what cannot be written is left out");
        Map<?, ?> job2 = (Map<?, ?>) ((List<?>) back.get("jobs")).get(0);
        assertEquals(job.get("jobId"), job2.get("jobId"));
        assertEquals(job.get("owner"), job2.get("owner"));
        assertEquals(job.get("started"), job2.get("started"));
        assertEquals(job.get("logDirectory"), job2.get("logDirectory"));
        assertEquals(Set.of(5L), job2.get("ids"));
        assertEquals(job.get("history"), job2.get("history"), "finished jobs, for mpi:jobs");
        Object[] finished2 = (Object[]) ((List<?>) job2.get("finished")).get(0);
        assertArrayEquals(new long[] {1, 0, 7, 0}, (long[]) finished2[0]);
        assertEquals("exited", finished2[1]);
        Map<?, ?> rank2 = (Map<?, ?>) ((List<?>) job2.get("ranks")).get(0);
        assertEquals(3, rank2.get("rankId"));
        assertEquals(4242L, rank2.get("pid"));
        assertEquals(true, rank2.get("stopped"));
        assertArrayEquals(new byte[] {1, 2, 3}, (byte[]) rank2.get("held"));
        assertArrayEquals(new long[] {7, 8}, (long[]) rank2.get("window"));
        assertArrayEquals(new int[] {9}, (int[]) rank2.get("counts"));
        assertEquals(0.5, rank2.get("ratio"));
        assertEquals((short) 2, rank2.get("flags"));
        assertTrue(rank2.containsKey("execReason"));
        assertNull(rank2.get("execReason"));
        assertTrue(!rank2.containsKey("exit"), "a future is not a value");
    }

    @Test
    void shouldRefuseDamagedInputWithAClearError() throws Exception {
        byte[] good = encode(new StateCodec(), Map.of("jobs", List.of("a", "b")));
        IOException truncated = assertThrows(IOException.class,
                () -> decode(java.util.Arrays.copyOf(good, good.length - 1)));
        assertTrue(truncated instanceof java.io.EOFException, truncated.toString());
        IOException tag = assertThrows(IOException.class, () -> decode(new byte[] {99}));
        assertEquals("unknown value tag 99", tag.getMessage());
        IOException length = assertThrows(IOException.class, () -> decode(new byte[] {10, (byte) 0xff, 0, 0, 0}));
        assertTrue(length.getMessage().contains("out of range"), length.getMessage());
    }

    @Test
    void shouldTakeNothingFromAStateFileThatCannotBeReadAndSetItAside() throws Exception {
        Files.write(temp.resolve(NodeRestart.FILE), new byte[] {1, 2, 3});
        assertNull(NodeRestart.take(temp, null));
        assertTrue(!Files.exists(temp.resolve(NodeRestart.FILE)), "a damaged file is not read again at every start");
        try (java.util.stream.Stream<Path> files = Files.list(temp)) {
            assertEquals(1, files.filter(p -> p.getFileName().toString().startsWith(NodeRestart.FILE
                    + RestartStateFile.DAMAGED)).count(), "but kept aside");
        }
        assertNull(NodeRestart.take(temp, null), "no file: nothing to take");
    }
}
