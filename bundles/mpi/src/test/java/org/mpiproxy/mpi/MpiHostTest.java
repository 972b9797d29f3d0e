package org.mpiproxy.mpi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.mpi.internal.FakeProxy;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V1HeaderDescriptor;
import org.mpiproxy.protocol.V1HeaderFlyweight;

class MpiHostTest {

    @TempDir
    Path dir;
    private final PrintStream diagnostics = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);

    private Path hostfile(String text) throws IOException {
        Path file = dir.resolve("hostfile");
        Files.writeString(file, text);
        return file;
    }

    private Mpi init(Map<String, String> env, Properties properties, String... args) {
        return Mpi.init(args, env::get, properties, diagnostics);
    }

    @Test
    void shouldRunAloneWithAHostfileWithoutNodes() throws IOException {
        Path file = hostfile("# nobody\n\n");
        Mpi mpi = init(Map.of("MPIPROXY_PROGRAM", "mpiprime"), new Properties(), file.toString(), "10");

        assertEquals(0, mpi.rank());
        assertEquals(1, mpi.size());
        assertEquals(List.of("10"), mpi.args());
        assertEquals(MpiErrors.ERR_RANK, assertThrows(MpiException.class, () -> mpi.send(new int[1], 0, 1, 1)).errorCode());
        assertEquals(MpiErrors.ERR_RANK, assertThrows(MpiException.class, () -> mpi.send(new int[1], 0, 1, 0)).errorCode());
        mpi.close();
        assertArrayEquals(new int[] {0}, mpi.exitStatuses());
    }

    @Test
    void shouldNameFileAndLineOfAMalformedHostfile() throws IOException {
        Path file = hostfile("# nodes\n127.0.0.1:6660:0\n127.0.0.1:6660\n");

        MpiException e = assertThrows(MpiException.class,
                () -> init(Map.of("MPIPROXY_PROGRAM", "p"), new Properties(), file.toString()));

        assertEquals(MpiErrors.ERR_ARG, e.errorCode());
        assertTrue(e.getMessage().contains(file + " line 3"), e.getMessage());
    }

    @Test
    void shouldFailWithIoErrorWhenTheHostfileIsMissing() {
        MpiException e = assertThrows(MpiException.class,
                () -> init(Map.of("MPIPROXY_PROGRAM", "p"), new Properties(), dir.resolve("none").toString()));

        assertEquals(MpiErrors.ERR_IO, e.errorCode());
    }

    @Test
    void shouldRequireAProgramName() throws IOException {
        Path file = hostfile("");

        MpiException e = assertThrows(MpiException.class, () -> init(Map.of(), new Properties(), file.toString()));

        assertEquals(MpiErrors.ERR_ARG, e.errorCode());
        assertTrue(e.getMessage().contains("MPIPROXY_PROGRAM"), e.getMessage());
    }

    @Test
    void shouldParseTimeout() {
        assertEquals(Mpi.DEFAULT_TIMEOUT, Mpi.timeout(null));
        assertEquals(Duration.ofSeconds(5), Mpi.timeout(" 5 "));
        assertEquals(Duration.ZERO, Mpi.timeout("0"));
        assertEquals(MpiErrors.ERR_ARG, assertThrows(MpiException.class, () -> Mpi.timeout("-1")).errorCode());
        assertEquals(MpiErrors.ERR_ARG, assertThrows(MpiException.class, () -> Mpi.timeout("5s")).errorCode());
    }

    @Test
    void shouldExecThePropertyNamedProgramAndSendIntsLittleEndian() throws Exception {
        try (FakeProxy proxy = new FakeProxy((d, p) -> {
            FakeProxy.STARTS_EVERYTHING.on(d, p);
            V1HeaderFlyweight h = d.header();
            if (h.operation() == V1HeaderDescriptor.OP_RECV) {
                ByteBuffer b = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, 0x12345678);
                p.reply(d.source(), V1HeaderDescriptor.OP_RECV, 0, h.rankId(), 0, h.datatype(), 1, b.array());
            }
        })) {
            Path file = hostfile("127.0.0.1:" + proxy.port() + ":0\n");
            Properties properties = new Properties();
            properties.setProperty(Mpi.PROGRAM_PROPERTY, "mpiping");
            int[] pong = new int[1];
            try (Mpi mpi = init(Map.of("MPIPROXY_TIMEOUT", "5", Mpi.PROTOCOL_ENV, "v1"), properties, file.toString(),
                    "a")) {
                assertEquals(2, mpi.size());
                mpi.send(new int[] {0xaabbccdd}, 0, 1, 1);
                mpi.recv(pong, 0, 1, 1);
            }

            assertEquals(0x12345678, pong[0]);
            assertEquals("mpiping a", new String(proxy.received(V1HeaderDescriptor.OP_EXEC).get(0).payload(),
                    StandardCharsets.UTF_8));
            FakeProxy.Datagram send = proxy.received(V1HeaderDescriptor.OP_SEND).get(0);
            assertArrayEquals(new byte[] {(byte) 0xdd, (byte) 0xcc, (byte) 0xbb, (byte) 0xaa}, send.payload());
            assertEquals(MpiDatatype.INT.code(), send.header().datatype());
            assertEquals(1, proxy.received(V1HeaderDescriptor.OP_TERMINATE).size());
        }
    }

    @Test
    void shouldSendAMessageOverV1AsDatagramsAndReceiveAnyDatatypeByCount() throws Exception {
        byte[] shorts = new byte[2000];
        new java.util.Random(7).nextBytes(shorts);
        try (FakeProxy proxy = new FakeProxy((d, p) -> {
            FakeProxy.STARTS_EVERYTHING.on(d, p);
            V1HeaderFlyweight h = d.header();
            if (h.operation() == V1HeaderDescriptor.OP_RECV) {
                // answers 3 elements per reply, from the first element on
                int asked = (int) h.datacount();
                for (int done = 0; done < asked; done += 3) {
                    int k = Math.min(3, asked - done);
                    p.reply(d.source(), V1HeaderDescriptor.OP_RECV, 0, h.rankId(), 0, h.datatype(), k,
                            java.util.Arrays.copyOfRange(shorts, done * 2, (done + k) * 2));
                }
            }
        })) {
            Path file = hostfile("127.0.0.1:" + proxy.port() + ":0\n");
            Properties properties = new Properties();
            properties.setProperty(Mpi.PROGRAM_PROPERTY, "mpiecho");
            ByteBuffer back = ByteBuffer.allocate(2000);
            try (Mpi mpi = init(Map.of("MPIPROXY_TIMEOUT", "5", Mpi.PROTOCOL_ENV, "v1"), properties, file.toString())) {
                assertEquals(false, mpi.hasTags());
                Message m = Message.of(MpiDatatype.SHORT.code(), 0, shorts);
                mpi.send(m, 1);
                assertEquals(MpiErrors.ERR_TAG, assertThrows(MpiException.class,
                        () -> mpi.send(Message.of(MpiDatatype.SHORT.code(), 1, shorts), 1)).errorCode());
                assertEquals(MpiErrors.ERR_TYPE, assertThrows(MpiException.class,
                        () -> mpi.send(Message.of(MpiDatatype.DOUBLE.code(), 0, new byte[8]), 1)).errorCode());
                assertEquals(MpiErrors.ERR_TYPE, assertThrows(MpiException.class,
                        () -> mpi.recvElements(ByteBuffer.allocate(8), 1, MpiDatatype.DOUBLE.code(), 1)).errorCode());
                assertEquals(MpiErrors.ERR_TAG, assertThrows(MpiException.class, () -> mpi.recv(1, 0)).errorCode());
                mpi.recvElements(back, 1000, MpiDatatype.SHORT.code(), 1);
            }

            assertArrayEquals(shorts, back.array());
            List<FakeProxy.Datagram> sends = proxy.received(V1HeaderDescriptor.OP_SEND);
            assertEquals(2, sends.size(), "718 shorts fill one 1448-byte datagram, 282 the next");
            assertEquals(718, sends.get(0).header().datacount());
            assertEquals(MpiDatatype.SHORT.code(), sends.get(1).header().datatype());
            byte[] sent = new byte[2000];
            System.arraycopy(sends.get(0).payload(), 0, sent, 0, 1436);
            System.arraycopy(sends.get(1).payload(), 0, sent, 1436, 564);
            assertArrayEquals(shorts, sent);
            assertEquals(1, proxy.received(V1HeaderDescriptor.OP_RECV).size());
        }
    }

    @Test
    void shouldTakeTheWorldFromTheEnvironmentAndWriteExitStatuses() throws Exception {
        try (FakeProxy proxy = new FakeProxy((d, p) -> {
            V1HeaderFlyweight h = d.header();
            if (h.operation() == V1HeaderDescriptor.OP_EXEC) {
                p.reply(d.source(), V1HeaderDescriptor.OP_EXEC, 0, h.rankId(), h.coreId(), 0, 0, new byte[0]);
            } else if (h.operation() == V1HeaderDescriptor.OP_TERMINATE) {
                p.reply(d.source(), V1HeaderDescriptor.OP_TERMINATE, 0, h.rankId(), h.coreId(), 0, h.rankId() == 2 ? 7 : 0,
                        new byte[0]);
            }
        })) {
            int hostPort;
            try (java.nio.channels.DatagramChannel probe = java.nio.channels.DatagramChannel.open()) {
                probe.bind(new java.net.InetSocketAddress(0));
                hostPort = ((java.net.InetSocketAddress) probe.getLocalAddress()).getPort();
            }
            Path statuses = dir.resolve("statuses");
            Path initFile = dir.resolve("init");
            String hosts = "127.0.0.1:" + proxy.port() + ":0,127.0.0.1:" + proxy.port() + ":1";
            Map<String, String> env = Map.of(Mpi.HOSTS_ENV, hosts, Mpi.PROGRAM_ENV, "mpiprime", Mpi.TIMEOUT_ENV, "5",
                    Mpi.HOST_PORT_ENV, Integer.toString(hostPort), Mpi.STATUS_FILE_ENV, statuses.toString(),
                    Mpi.PROTOCOL_ENV, "v1", Mpi.INIT_FILE_ENV, initFile.toString());
            assertEquals(List.of("1000"), Mpi.programArguments(new String[] {"1000"}, env::get));
            try (Mpi mpi = init(env, new Properties(), "1000")) {
                assertTrue(Files.exists(initFile), "init tells the launcher it ran");
                assertEquals(3, mpi.size());
                assertEquals(List.of("1000"), mpi.args());
            }

            List<FakeProxy.Datagram> execs = proxy.received(V1HeaderDescriptor.OP_EXEC);
            assertEquals(2, execs.size());
            assertEquals(hostPort, execs.get(0).source().getPort());
            assertEquals(1, execs.get(1).header().coreId());
            assertEquals("mpiprime 1000", new String(execs.get(0).payload(), StandardCharsets.UTF_8));
            assertEquals("0 0\n1 0\n2 7\n", Files.readString(statuses));
        }
    }

    @Test
    void shouldNameTheEntryOfAMalformedHostsVariable() {
        Map<String, String> env = Map.of(Mpi.HOSTS_ENV, "127.0.0.1:6660:0,127.0.0.300:6660:0", Mpi.PROGRAM_ENV, "x");
        MpiException e = assertThrows(MpiException.class, () -> init(env, new Properties(), "1"));

        assertEquals(MpiErrors.ERR_ARG, e.errorCode());
        assertTrue(e.getMessage().contains("MPIPROXY_HOSTS entry 2"), e.getMessage());
    }

    @Test
    void shouldRejectABadHostPort() {
        assertEquals(MpiErrors.ERR_ARG, assertThrows(MpiException.class, () -> Mpi.hostPort("70000")).errorCode());
        assertEquals(0, Mpi.hostPort(null));
        assertEquals(4242, Mpi.hostPort(" 4242 "));
    }

    @Test
    void shouldKeepRankCommandLinesWhenTheHostsVariableIsSet() {
        Map<String, String> env = Map.of(Mpi.HOSTS_ENV, "127.0.0.1:6660:0");
        assertEquals(List.of("9"), Mpi.programArguments(new String[] {"--slave", "c", "1", "2", "9"}, env::get));
    }

    @Test
    void shouldSpeakV2ByDefaultAndSayWhichKeyFileIsMissing() throws IOException {
        Path file = hostfile("127.0.0.1:9:0\n");
        MpiException e = assertThrows(MpiException.class, () -> init(Map.of("MPIPROXY_PROGRAM", "p",
                Mpi.KEY_FILE_ENV, dir.resolve("absent.key").toString()), new Properties(), file.toString()));
        assertEquals(MpiErrors.ERR_ARG, e.errorCode());
        assertEquals("MPI_ERR_ARG: key file " + dir.resolve("absent.key") + " does not exist", e.getMessage());
    }

    @Test
    void shouldRefuseAKeyFileOthersCanRead() throws IOException {
        Path key = dir.resolve("open.key");
        java.nio.file.Files.writeString(key, "00".repeat(32));
        java.nio.file.Files.setPosixFilePermissions(key, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        Path file = hostfile("127.0.0.1:9:0\n");
        MpiException e = assertThrows(MpiException.class, () -> init(Map.of("MPIPROXY_PROGRAM", "p",
                Mpi.KEY_FILE_ENV, key.toString()), new Properties(), file.toString()));
        assertTrue(e.getMessage().contains("has mode rw-r--r--"), e.getMessage());
    }

    @Test
    void shouldRefuseAWeakKeyAsTheNodesDo() throws IOException {
        Path key = dir.resolve("weak.key");
        java.nio.file.Files.writeString(key, "ab".repeat(32));
        java.nio.file.Files.setPosixFilePermissions(key, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        Path file = hostfile("127.0.0.1:9:0\n");
        MpiException e = assertThrows(MpiException.class, () -> init(Map.of("MPIPROXY_PROGRAM", "p",
                Mpi.KEY_FILE_ENV, key.toString()), new Properties(), file.toString()));
        assertTrue(e.getMessage().contains("holds a weak key"), e.getMessage());
    }

    @Test
    void shouldRefuseAnUnknownProtocol() throws IOException {
        Path file = hostfile("127.0.0.1:9:0\n");
        MpiException e = assertThrows(MpiException.class, () -> init(Map.of("MPIPROXY_PROGRAM", "p",
                Mpi.PROTOCOL_ENV, "v3"), new Properties(), file.toString()));
        assertEquals("MPI_ERR_ARG: MPIPROXY_PROTOCOL='v3' is neither v1 nor v2", e.getMessage());
    }
}
