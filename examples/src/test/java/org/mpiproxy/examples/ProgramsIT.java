package org.mpiproxy.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import net.jpountz.lz4.LZ4FrameInputStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.MessageRing;
import org.mpiproxy.channel.shm.MappedRankChannel;
import org.mpiproxy.protocol.MpiDatatype;

/** Runs the built files of target/programs as users and proxies run them. */
class ProgramsIT {

    private static final Path PROGRAMS = Path.of(System.getProperty("programs.directory", "target/programs"));
    /** How long a program may run before the test counts it as hung; each one ends by itself. */
    private static final long CEILING_SECONDS = 300;
    /**
     * The environment of a rank 0 whose proxy is {@link LoopbackProxy}: no reply timeout, since
     * that proxy answers when the ranks act (their JVMs start first), and {@link #run}'s
     * ceiling catches a hang.
     */
    private static final Map<String, String> THROUGH_LOOPBACK = Map.of("MPIPROXY_TIMEOUT", "0");

    @TempDir
    Path dir;

    /** Output of a finished process. */
    private record Run(int status, String out, String err) {
    }

    private Run run(Map<String, String> env, String... argv) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(argv)
                .redirectOutput(dir.resolve("out").toFile())
                .redirectError(dir.resolve("err").toFile());
        pb.environment().remove("MPIPROXY_PROGRAM");
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        // these runs talk to a v1 test proxy; v2 is covered by the proxy's end-to-end tests and V2ProgramsIT
        pb.environment().put("MPIPROXY_PROTOCOL", "v1");
        pb.environment().putAll(env);
        Process p = pb.start();
        try {
            assertTrue(p.waitFor(CEILING_SECONDS, TimeUnit.SECONDS), "still running: " + String.join(" ", argv));
        } finally {
            p.destroyForcibly();
        }
        return new Run(p.exitValue(), Files.readString(dir.resolve("out")), Files.readString(dir.resolve("err")));
    }

    private static String program(String name) {
        return PROGRAMS.resolve(name).toAbsolutePath().toString();
    }

    private Path hostfile(String... lines) throws IOException {
        return Files.write(dir.resolve("hostfile"), List.of(lines));
    }

    private static String primesBelow(int n) {
        StringBuilder b = new StringBuilder();
        int count = 0;
        for (int k = 2; k < n; k++) {
            boolean prime = true;
            for (int d = 2; d * d <= k; d++) {
                prime &= k % d != 0;
            }
            if (prime) {
                b.append(k).append('\n');
                count++;
            }
        }
        return b.append(count).append(" primes below ").append(n).append('\n').toString();
    }

    @Test
    void shouldShipExecutableStubPlusJarAndIdenticalLz4Images() throws IOException {
        for (String name : List.of("mpiping", "mpiprime", "mpiecho")) {
            byte[] program = Files.readAllBytes(PROGRAMS.resolve(name));
            String head = new String(program, 0, 512, StandardCharsets.ISO_8859_1);
            assertTrue(head.startsWith("#!/bin/sh\n"), head);
            assertTrue(head.contains("-cp \"$0\" org.mpiproxy.examples.Mpi"), head);
            assertTrue(Files.getPosixFilePermissions(PROGRAMS.resolve(name)).contains(PosixFilePermission.OTHERS_EXECUTE));
            try (InputStream in = new LZ4FrameInputStream(Files.newInputStream(PROGRAMS.resolve(name + ".lz4")))) {
                assertArrayEquals(program, in.readAllBytes());
            }
        }
        List<String> hosts = Files.readAllLines(PROGRAMS.resolve("hostfile")).stream()
                .filter(l -> !l.isBlank() && !l.startsWith("#")).toList();
        assertEquals(List.of("127.0.0.1:6660:0", "127.0.0.1:6660:1"), hosts);
    }

    @Test
    void shouldPrintUsageWithoutArguments() throws Exception {
        Run r = run(Map.of(), program("mpiprime"));

        assertEquals(2, r.status());
        assertTrue(r.err().startsWith("usage: mpiprime HOSTFILE NUMBER"), r.err());
        assertEquals(0, run(Map.of(), program("mpiping"), "--help").status());
    }

    @Test
    void shouldComputeAloneWhenTheHostfileNamesNoRanks() throws Exception {
        Path hosts = hostfile("# nobody");

        Run r = run(Map.of(), program("mpiprime"), hosts.toString(), "1000");

        assertEquals(0, r.status(), r.err());
        assertEquals(primesBelow(1000), r.out());
    }

    @Test
    void shouldFailWithTimeoutWhenNoProxyAnswers() throws Exception {
        try (DatagramChannel silent = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            int port = ((InetSocketAddress) silent.getLocalAddress()).getPort();
            Path hosts = hostfile("127.0.0.1:" + port + ":0");

            Run r = run(Map.of("MPIPROXY_TIMEOUT", "1"), program("mpiping"), hosts.toString());

            assertEquals(1, r.status());
            assertTrue(r.err().contains("no EXEC reply"), r.err());
            ByteBuffer exec = ByteBuffer.allocate(1448).order(ByteOrder.LITTLE_ENDIAN);
            silent.receive(exec);
            assertEquals("mpiping", new String(exec.array(), 12, exec.position() - 12, StandardCharsets.UTF_8));
        }
    }

    @Test
    void shouldSendItsSliceAsARank() throws Exception {
        Path file = dir.resolve("rank-1.chan");
        try (MappedRankChannel proxySide = MappedRankChannel.create(file, 65536, 7, 1)) {
            Run r = run(Map.of(), program("mpiprime"), "--slave", file.toString(), "1", "3", "100");

            assertEquals(0, r.status(), r.err());
            PrimeSlices s = PrimeSlices.of(100, 3);
            ByteBuffer flags = ByteBuffer.allocate((int) s.per());
            assertEquals(s.per(), proxySide.fromRank().poll(MpiDatatype.UNSIGNED_CHAR.code(), flags, 0, (int) s.per()));
            assertArrayEquals(s.markSlice(1), flags.array());
            assertTrue(proxySide.fromRank().isEmpty());
        }
    }

    @Test
    void shouldAnswerThePingAsARank() throws Exception {
        Path file = dir.resolve("rank-1.chan");
        try (MappedRankChannel proxySide = MappedRankChannel.create(file, 65536, 7, 1)) {
            ByteBuffer ping = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, MpiPing.PING);
            assertTrue(proxySide.toRank().offer(MpiDatatype.INT.code(), 1, ping, 0, 4));

            Run r = run(Map.of(), program("mpiping"), "--slave", file.toString(), "1", "2");

            assertEquals(0, r.status(), r.err());
            ByteBuffer pong = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
            assertEquals(1, proxySide.fromRank().poll(MpiDatatype.INT.code(), pong, 0, 1));
            assertEquals(MpiPing.PONG, pong.getInt(0));
        }
    }

    @Test
    void shouldEchoEveryMessageAsARankUntilTheStopMessage() throws Exception {
        Path file = dir.resolve("rank-1.chan");
        try (MappedRankChannel proxySide = MappedRankChannel.create(file, 65536, 7, 1)) {
            ByteBuffer shorts = ByteBuffer.allocate(3000).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < 1500; i++) {
                shorts.putShort(2 * i, (short) (i * 37 - 20000));
            }
            // one message of 1500 MPI_SHORT with tag 7 in two records, one MPI_DOUBLE, then the stop message
            int shortType = MpiDatatype.SHORT.code();
            assertTrue(proxySide.toRank().offer(shortType, 1000, 7 | MessageRing.MORE_RECORDS, shorts, 0, 2000));
            assertTrue(proxySide.toRank().offer(shortType, 500, 7, shorts, 2000, 1000));
            ByteBuffer pi = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putDouble(0, Math.PI);
            assertTrue(proxySide.toRank().offer(MpiDatatype.DOUBLE.code(), 1, 0, pi, 0, 8));
            assertTrue(proxySide.toRank().offer(MpiDatatype.CHAR.code(), 4, 0,
                    ByteBuffer.wrap("STOP".getBytes(StandardCharsets.US_ASCII)), 0, 4));

            Run r = run(Map.of(), program("mpiecho"), "--slave", file.toString(), "1", "2");

            assertEquals(0, r.status(), r.err());
            assertEquals("rank 1 of 2: echoed 2 messages, 3008 bytes\n", r.out());
            MessageRing back = proxySide.fromRank();
            ByteBuffer echoed = ByteBuffer.allocate(3000).order(ByteOrder.LITTLE_ENDIAN);
            int elements = 0;
            while (elements < 1500) {
                assertEquals(shortType, back.peekDatatype());
                int tagWord = back.peekTagWord();
                assertEquals(7, tagWord & ~MessageRing.MORE_RECORDS);
                elements += back.pollRecord(shortType, echoed, 2 * elements, 1500 - elements);
                assertEquals(elements < 1500, (tagWord & MessageRing.MORE_RECORDS) != 0, "end of the message");
            }
            assertEquals(shorts.rewind(), echoed.rewind());
            assertEquals(0, back.peekTagWord());
            ByteBuffer d = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
            assertEquals(1, back.pollRecord(MpiDatatype.DOUBLE.code(), d, 0, 1));
            assertEquals(Math.PI, d.getDouble(0));
            assertTrue(back.isEmpty(), "the stop message is not echoed");
        }
    }

    @Test
    void shouldCheckTheEchoOfTwoRanksThroughAV1Proxy() throws Exception {
        Path work = Files.createDirectories(dir.resolve("proxy"));
        try (LoopbackProxy proxy = new LoopbackProxy(PROGRAMS.toAbsolutePath(), work)) {
            Path hosts = hostfile("127.0.0.1:" + proxy.port() + ":0", "127.0.0.1:" + proxy.port() + ":1");

            Run echo = run(THROUGH_LOOPBACK, program("mpiecho"), hosts.toString(), "200000");

            String logs = rankLogs(work);
            assertEquals(List.of(), proxy.failures(), logs);
            assertEquals(0, echo.status(), echo.out() + echo.err() + logs);
            List<String> lines = echo.out().lines().toList();
            assertEquals(2, lines.size(), echo.out());
            // 8 v1 datatypes x 2 messages + one of MPI_LONG: 30 bytes of single elements + 8 x 3000 + 200000
            assertTrue(lines.get(0).startsWith("rank 1: 17 messages echoed, 224030 bytes, every element checked, in "),
                    echo.out());
            assertTrue(lines.get(1).startsWith("rank 2: 17 messages echoed, 224030 bytes, every element checked, in "),
                    echo.out());
            // each v1 datagram is one message at the rank; the bytes add up
            assertTrue(logs.contains("rank 1 of 3: echoed ") && logs.contains(" messages, 224030 bytes"), logs);
        }
    }

    private static String rankLogs(Path work) throws IOException {
        StringBuilder b = new StringBuilder();
        try (var files = Files.list(work)) {
            for (Path f : files.filter(f -> f.toString().endsWith(".err") || f.toString().endsWith(".out")).sorted().toList()) {
                b.append("\n--- ").append(f.getFileName()).append('\n').append(Files.readString(f));
            }
        }
        return b.toString();
    }

    @Test
    void shouldRunAJobOfThreeThroughAV1Proxy() throws Exception {
        Path work = Files.createDirectories(dir.resolve("proxy"));
        try (LoopbackProxy proxy = new LoopbackProxy(PROGRAMS.toAbsolutePath(), work)) {
            Path hosts = hostfile("# two ranks", "127.0.0.1:" + proxy.port() + ":0", "127.0.0.1:" + proxy.port() + ":1");

            Run prime = run(THROUGH_LOOPBACK, program("mpiprime"), hosts.toString(), "10007");
            Run ping = run(THROUGH_LOOPBACK, program("mpiping"), hosts.toString());

            String logs = rankLogs(work);
            assertEquals(List.of(), proxy.failures(), logs);
            assertEquals(0, prime.status(), prime.err() + logs);
            assertEquals(primesBelow(10007), prime.out());
            assertEquals(0, ping.status(), ping.err() + logs);
            List<String> lines = ping.out().lines().collect(Collectors.toCollection(ArrayList::new));
            assertEquals(2, lines.size(), ping.out());
            assertTrue(lines.get(0).startsWith("rank 1: pong 0x12345678 in "), ping.out());
            assertTrue(lines.get(1).startsWith("rank 2: pong 0x12345678 in "), ping.out());
        }
    }
}
