package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.UnknownHostException;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class NodeMapTest {

    private static final NodeMap.Dns DNS = name -> {
        if (name.equals("login.example.org")) {
            return "10.9.8.7";
        }
        throw new UnknownHostException(name);
    };

    @Test
    void shouldParseNamesAddressesAndPorts() {
        Map<String, NodeMap.Address> map = NodeMap.parse("map", List.of("# nodes", "n1 127.0.0.11",
                "n2\t127.0.0.1:16662   # second", ""));

        assertEquals(Map.of("n1", new NodeMap.Address("127.0.0.11", 0), "n2", new NodeMap.Address("127.0.0.1", 16662)),
                map);
    }

    @Test
    void shouldResolveByMapThenLiteralThenDns() {
        NodeMap nodes = new NodeMap(NodeMap.parse("map", List.of("n1 127.0.0.11", "n2 127.0.0.1:16662")), 7000, DNS);

        assertEquals(new NodeMap.Address("127.0.0.11", 7000), nodes.resolve("n1"));
        assertEquals(new NodeMap.Address("127.0.0.1", 16662), nodes.resolve("n2"));
        assertEquals(new NodeMap.Address("10.1.2.3", 7000), nodes.resolve("10.1.2.3"));
        assertEquals(new NodeMap.Address("10.9.8.7", 7000), nodes.resolve("login.example.org"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> nodes.resolve("n9"));
        assertTrue(e.getMessage().startsWith("node n9 is not in the node map and has no IPv4 address in DNS"),
                e.getMessage());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "n3                  | map line 2: expected NAME ADDRESS[:PORT]",
        "n3 1.2.3.4 extra    | map line 2: expected NAME ADDRESS[:PORT]",
        "n3 host.example     | map line 2: 'host.example' is not an IPv4 address",
        "n3 1.2.3.4:0        | map line 2: port '0' is not a number in 1-65535",
        "n1 1.2.3.4          | map line 2: node n1 is mapped twice",
        "n/3 1.2.3.4         | map line 2: 'n/3' is not a host name",
    })
    void shouldNameTheLineOfAMalformedMap(String bad, String message) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> NodeMap.parse("map", List.of("n1 127.0.0.11", bad)));

        assertTrue(e.getMessage().startsWith(message), e.getMessage());
    }
}
