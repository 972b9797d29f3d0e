package org.mpiproxy.mpi.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class HostfileTest {

    @Test
    void shouldParseOneNodePerLineInRankOrder() {
        List<HostfileEntry> nodes = Hostfile.parse("hosts", List.of("127.0.0.1:6660:0", "10.0.0.255:7000:3"));

        assertEquals(2, nodes.size());
        assertArrayEquals(new byte[] {127, 0, 0, 1}, nodes.get(0).address());
        assertEquals(6660, nodes.get(0).port());
        assertEquals(0, nodes.get(0).coreId());
        assertEquals(1, nodes.get(0).lineNumber());
        assertEquals("10.0.0.255:7000:3", nodes.get(1).toString());
        assertEquals(7000, nodes.get(1).socketAddress().getPort());
        assertEquals("10.0.0.255", nodes.get(1).socketAddress().getAddress().getHostAddress());
    }

    @Test
    void shouldIgnoreCommentAndBlankLinesButKeepLineNumbers() {
        List<HostfileEntry> nodes = Hostfile.parse("hosts", List.of("# nodes", "", "   ", "  127.0.0.1:6660:1  ",
                "#127.0.0.2:6660:0", "127.0.0.1:6660:2\r"));

        assertEquals(2, nodes.size());
        assertEquals(4, nodes.get(0).lineNumber());
        assertEquals(1, nodes.get(0).coreId());
        assertEquals(6, nodes.get(1).lineNumber());
        assertEquals(2, nodes.get(1).coreId());
    }

    @Test
    void shouldReturnNoNodesForEmptyFile() {
        assertTrue(Hostfile.parse("hosts", List.of()).isEmpty());
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.0.0.1:6660", "127.0.0.1:6660:0:1", "127.0.0.1", "localhost:6660:0",
            "127.0.0:6660:0", "127.0.0.1.1:6660:0", "256.0.0.1:6660:0", "127.0.0.-1:6660:0", "::1:6660:0",
            "127.0.0.1:0:0", "127.0.0.1:65536:0", "127.0.0.1:port:0", "127.0.0.1:6660:-1", "127.0.0.1:6660:65536",
            "127.0.0.1:6660:", "127.0.0.1::0", "127.0.0.1:66 60:0", ":6660:0"})
    void shouldRejectMalformedLineNamingFileAndLineNumber(String bad) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Hostfile.parse("cluster.hosts", List.of("# header", "127.0.0.1:6660:0", "", bad)));

        assertTrue(e.getMessage().startsWith("cluster.hosts line 4: "), e.getMessage());
    }

    @Test
    void shouldExplainWhichFieldIsWrong() {
        assertTrue(message("127.0.0.1:6660").contains("expected <ipv4>:<port>:<coreId>"));
        assertTrue(message("300.1.1.1:6660:0").contains("'300.1.1.1' is not an IPv4 address"));
        assertTrue(message("1.1.1.1:0:0").contains("port '0'"));
        assertTrue(message("1.1.1.1:1:x").contains("coreId 'x'"));
    }

    @Test
    void shouldReadFileAndNameItInErrors(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("hostfile");
        Files.writeString(file, "# two ranks\n127.0.0.1:6660:0\n127.0.0.1:6660:1\n");
        assertEquals(2, Hostfile.read(file).size());

        Files.writeString(file, "127.0.0.1:6660:0\nbroken\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Hostfile.read(file));
        assertTrue(e.getMessage().startsWith(file + " line 2: "), e.getMessage());
    }

    private static String message(String line) {
        return assertThrows(IllegalArgumentException.class, () -> Hostfile.parse("h", List.of(line))).getMessage();
    }

    @Test
    void shouldParseACommaSeparatedList() {
        List<HostfileEntry> nodes = Hostfile.parseList("MPIPROXY_HOSTS", "127.0.0.11:6660:0,127.0.0.12:6661:1");

        assertEquals(2, nodes.size());
        assertEquals("127.0.0.12:6661:1", nodes.get(1).toString());
        assertEquals(List.of(), Hostfile.parseList("MPIPROXY_HOSTS", ""));
    }

    @Test
    void shouldNameTheEntryOfAMalformedList() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Hostfile.parseList("MPIPROXY_HOSTS", "127.0.0.1:6660:0,,127.0.0.1:6660:1"));
        assertTrue(e.getMessage().startsWith("MPIPROXY_HOSTS entry 2 is empty"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Hostfile.parseList("MPIPROXY_HOSTS", "127.0.0.1:0:1"));
        assertTrue(e.getMessage().startsWith("MPIPROXY_HOSTS entry 1: port"), e.getMessage());
    }
}
