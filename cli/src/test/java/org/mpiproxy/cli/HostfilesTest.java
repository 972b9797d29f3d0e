package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class HostfilesTest {

    @Test
    void shouldParseFreeNosLinesAsRankPlacements() {
        Hostfiles.Content c = Hostfiles.parse("hf", List.of("# two ranks", "127.0.0.1:6660:0", "",
                "10.0.0.2:7000:3   # trailing comment"));

        assertTrue(c.isFreeNos());
        assertEquals(List.of("127.0.0.1:6660:0", "10.0.0.2:7000:3"),
                c.placements().stream().map(Placement::hostEntry).toList());
    }

    @Test
    void shouldParseHydraLinesAsNodeSlots() {
        Hostfiles.Content c = Hostfiles.parse("hf", List.of("n1:2", "n2", "# x", "10.0.0.3:4"));

        assertFalse(c.isFreeNos());
        assertEquals(List.of(new NodeSlots("n1", 2), new NodeSlots("n2", 1), new NodeSlots("10.0.0.3", 4)), c.nodes());
    }

    @Test
    void shouldReturnNothingForAFileOfComments() {
        Hostfiles.Content c = Hostfiles.parse("hf", List.of("# nothing", "   "));

        assertTrue(c.placements().isEmpty());
        assertTrue(c.nodes().isEmpty());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "127.0.0.1:6660:x      | hf line 2: coreId 'x' is not a number in 0-65535",
        "127.0.0.1:0:1         | hf line 2: port '0' is not a number in 1-65535",
        "127.0.0.256:6660:1    | hf line 2: '127.0.0.256' is not an IPv4 address",
        "n1:2                  | hf line 2: mixes FreeNOS lines",
    })
    void shouldNameTheLineOfAMalformedFreeNosFile(String bad, String message) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Hostfiles.parse("hf", List.of("127.0.0.1:6660:0", bad)));

        assertTrue(e.getMessage().startsWith(message), e.getMessage());
        assertTrue(e.getMessage().contains("got '" + bad + "'"), e.getMessage());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "n2:0         | hf line 3: rank count '0' is not a number in 1-65534",
        "n2:two       | hf line 3: rank count 'two' is not a number",
        "n2:          | hf line 3: rank count '' is not a number",
        ":2           | hf line 3: the host name is empty",
        "n 2          | hf line 3: 'n 2' is not a host name",
        "10.0.0.1:1:0 | hf line 3: mixes FreeNOS lines",
    })
    void shouldNameTheLineOfAMalformedHydraFile(String bad, String message) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Hostfiles.parse("hf", List.of("n1:2", "", bad)));

        assertTrue(e.getMessage().startsWith(message), e.getMessage());
    }

    @Test
    void shouldParseAHostList() {
        assertEquals(List.of(new NodeSlots("a", 2), new NodeSlots("b", 2), new NodeSlots("c", 1)),
                Hostfiles.parseHostList("a:2, b:2,c"));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "a:2,,b     | --hosts entry 2 is empty",
        "a:2,b:-1   | --hosts entry 2: rank count '-1'",
        "a:2:3      | --hosts entry 1: rank count '2:3'",
        "''         | --hosts entry 1 is empty",
        "a/b        | --hosts entry 1: 'a/b' is not a host name",
    })
    void shouldNameTheEntryOfAMalformedHostList(String bad, String message) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Hostfiles.parseHostList(bad));

        assertTrue(e.getMessage().startsWith(message), e.getMessage());
    }

    @Test
    void shouldReadAFileAndNameItInErrors(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("hosts");
        Files.writeString(file, "n1:2\nn2:x\n");

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Hostfiles.read(file));
        assertTrue(e.getMessage().startsWith(file + " line 2:"), e.getMessage());
    }
}
