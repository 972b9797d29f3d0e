package org.mpiproxy.transport.udp.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.mpiproxy.api.config.CheckedConfiguration;
import org.mpiproxy.api.config.RejectedConfigurationException;

/** Every key of org.mpiproxy.transport.udp: a value of the wrong type is one line, and the last good values stay. */
class UdpTransportConfigTest {

    private final CheckedConfiguration<UdpTransportComponent.Config> configurations =
            new CheckedConfiguration<>(UdpTransportComponent.Config.class);
    private final List<String> lines = new ArrayList<>();
    private UdpTransportComponent component;

    @AfterEach
    void tearDown() {
        if (component != null) {
            component.deactivate();
        }
    }

    /** Each key with a value its type does not allow. */
    static Stream<Object[]> badValues() {
        CheckedConfiguration<UdpTransportComponent.Config> c =
                new CheckedConfiguration<>(UdpTransportComponent.Config.class);
        return c.keys().stream().map(key -> new Object[] {key, badValue(c.typeOf(key))});
    }

    private static Object badValue(Class<?> type) {
        if (type == boolean.class) {
            return "yes";
        }
        if (type == int.class || type == long.class) {
            return "ten";
        }
        return List.of("a", "b");
    }

    private static String expected(String key, Object value) {
        return key + "=" + value + " is not " + (value.equals("yes") ? "true or false"
                : value.equals("ten") ? "a whole number" : "a single value (lists are comma-separated text)");
    }

    private static Map<String, Object> good() {
        Map<String, Object> m = new HashMap<>();
        m.put("address", "127.0.0.1");
        m.put("port", "0");
        m.put("receive.buffer.size", "65536");
        m.put("send.buffer.size", "65536");
        m.put("max.datagram.size", "2048");
        return m;
    }

    @ParameterizedTest(name = "{0}={1}")
    @MethodSource("badValues")
    void shouldKeepTheLastGoodConfigurationWhenAValueHasTheWrongType(String key, Object bad) throws Exception {
        component = new UdpTransportComponent(configurations, lines::add);
        component.activate(good());
        UdpTransportSettings before = component.settings();
        java.net.InetSocketAddress address = component.localAddress();
        Map<String, Object> next = good();
        next.put("max.datagram.size", "4096");
        next.put(key, bad);

        component.modified(next);

        assertEquals(List.of(UdpTransportComponent.PID + ": " + expected(key, bad)
                + "; keeping the last good configuration, listening on " + address), lines);
        assertSame(before, component.settings());
        assertEquals(2048, component.maxDatagramSize());
        assertEquals(address, component.localAddress());
    }

    @ParameterizedTest(name = "{0}={1}")
    @MethodSource("badValues")
    void shouldNotStartWithoutAnyGoodConfiguration(String key, Object bad) {
        component = null;
        Map<String, Object> first = good();
        first.put(key, bad);
        UdpTransportComponent c = new UdpTransportComponent(configurations, lines::add);
        assertThrows(RejectedConfigurationException.class, () -> c.activate(first));
        assertEquals(List.of(UdpTransportComponent.PID + ": " + expected(key, bad)
                + "; no good configuration yet: not started until the value is fixed"), lines);
    }

    @Test
    void shouldReactivateWithTheLastGoodConfiguration() throws Exception {
        component = new UdpTransportComponent(configurations, lines::add);
        component.activate(good());
        component.deactivate();
        Map<String, Object> bad = good();
        bad.put("port", "six");
        component = new UdpTransportComponent(configurations, lines::add);

        component.activate(bad);

        assertEquals(List.of(UdpTransportComponent.PID + ": port=six is not a whole number; keeping the last good"
                + " configuration"), lines);
        assertEquals(2048, component.maxDatagramSize());
    }

    @Test
    void shouldApplyAGoodConfigurationGivenAsText() throws Exception {
        component = new UdpTransportComponent(configurations, lines::add);
        component.activate(good());
        Map<String, Object> next = good();
        next.put("max.datagram.size", " 4096 ");
        component.modified(next);
        assertEquals(List.of(), lines);
        assertEquals(4096, component.maxDatagramSize());
    }
}
