package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.mpiproxy.api.config.CheckedConfiguration;
import org.mpiproxy.api.config.RejectedConfigurationException;

/**
 * Every key of org.mpiproxy.proxy and org.mpiproxy.health: a value of the wrong type is one
 * line, and the last good values stay.
 */
class ConfigTypingTest {

    private final CheckedConfiguration<ProxyConfig> proxyConfigurations =
            new CheckedConfiguration<>(ProxyConfig.class);
    private final CheckedConfiguration<HealthCheckComponent.Config> healthConfigurations =
            new CheckedConfiguration<>(HealthCheckComponent.Config.class);
    private final List<String> lines = new ArrayList<>();

    @TempDir
    Path dir;

    static Stream<Object[]> proxyKeys() {
        return badValues(new CheckedConfiguration<>(ProxyConfig.class));
    }

    static Stream<Object[]> healthKeys() {
        return badValues(new CheckedConfiguration<>(HealthCheckComponent.Config.class));
    }

    /** Each key with a value its type does not allow. */
    private static Stream<Object[]> badValues(CheckedConfiguration<?> c) {
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

    /** Non-default values for every key that has one to spare; v2 off, so no key file is needed. */
    private Map<String, Object> goodProxy() {
        Map<String, Object> m = new HashMap<>();
        m.put("log.directory", dir.resolve("logs").toString());
        m.put("state.directory", dir.resolve("state").toString());
        m.put("hold.limit.bytes", "4096");
        m.put("terminate.timeout.seconds", "7");
        m.put("stop.grace.seconds", "3");
        m.put("abort.on.failure", "false");
        m.put("job.timeout.seconds", "60");
        m.put("host.silence.seconds", "30");
        m.put("startup.wait.seconds", "0");
        m.put("launch.threads", "2");
        m.put("v1.enabled", "TRUE");
        m.put("v2.enabled", "false");
        return m;
    }

    @ParameterizedTest(name = "{0}={1}")
    @MethodSource("proxyKeys")
    void shouldKeepTheProxysLastGoodConfigurationWhenAValueHasTheWrongType(String key, Object bad) {
        ProxyComponent component = new ProxyComponent(goodProxy(), proxyConfigurations, lines::add);
        try {
            Map.Entry<ProxySettings, SupervisionSettings> before = component.settingsInForce();
            ProxyConfig config = component.configuration();
            Map<String, Object> next = goodProxy();
            next.put("stop.grace.seconds", "4");
            next.put("abort.on.failure", "true");
            next.put(key, bad);

            component.modified(next);

            assertEquals(List.of(ProxyComponent.PID + ": " + expected(key, bad)
                    + "; keeping the last good configuration"), lines);
            assertEquals(before, component.settingsInForce());
            assertEquals(java.time.Duration.ofSeconds(3), component.settingsInForce().getKey().stopGrace());
            assertEquals(false, component.settingsInForce().getValue().abortOnFailure());
            assertEquals(2, component.launchThreads());
            assertEquals(config, component.configuration());
        } finally {
            component.deactivate();
        }
    }

    @Test
    void shouldApplyTextValuesOfTheProxyCaseInsensitively() {
        ProxyComponent component = new ProxyComponent(goodProxy(), proxyConfigurations, lines::add);
        try {
            Map<String, Object> next = goodProxy();
            next.put("abort.on.failure", "True");
            next.put("stop.grace.seconds", " 4 ");
            component.modified(next);
            assertEquals(List.of(), lines);
            assertEquals(true, component.settingsInForce().getValue().abortOnFailure());
            assertEquals(java.time.Duration.ofSeconds(4), component.settingsInForce().getKey().stopGrace());
        } finally {
            component.deactivate();
        }
    }

    @Test
    void shouldNeverReadYesAsFalse() {
        Map<String, Object> first = goodProxy();
        first.put("abort.on.failure", "yes");
        assertNotStarted(new ProxyComponent(first, proxyConfigurations, lines::add));
        assertEquals(List.of(ProxyComponent.PID + ": abort.on.failure=yes is not true or false; no good"
                + " configuration yet: not started until the value is fixed"), lines);
    }

    /**
     * A proxy whose first configuration is bad is constructed without throwing (Declarative
     * Services would log a constructor's exception with its stack trace) and refuses to
     * activate with the line already logged, an exception without stack trace; what Declarative
     * Services calls around the refusal does not fail either.
     */
    private void assertNotStarted(ProxyComponent component) {
        component.bindChannels(new FakeChannelManager());
        component.bindOutput(new RankOutputBridge());
        RejectedConfigurationException e = assertThrows(RejectedConfigurationException.class, component::activate);
        assertEquals(List.of(ProxyComponent.PID + ": " + e.getMessage()), lines);
        assertEquals(0, e.getStackTrace().length);
        component.unbindOutput(new RankOutputBridge());
        component.deactivate();
    }

    @ParameterizedTest(name = "{0}={1}")
    @MethodSource("proxyKeys")
    void shouldNotStartTheProxyWithoutAnyGoodConfiguration(String key, Object bad) {
        Map<String, Object> first = goodProxy();
        first.put(key, bad);
        assertNotStarted(new ProxyComponent(first, proxyConfigurations, lines::add));
        assertEquals(List.of(ProxyComponent.PID + ": " + expected(key, bad)
                + "; no good configuration yet: not started until the value is fixed"), lines);
    }

    @Test
    void shouldReactivateTheProxyWithTheLastGoodConfiguration() {
        new ProxyComponent(goodProxy(), proxyConfigurations, lines::add).deactivate();
        Map<String, Object> bad = goodProxy();
        bad.put("stop.grace.seconds", "ten");

        ProxyComponent again = new ProxyComponent(bad, proxyConfigurations, lines::add);
        try {
            assertEquals(List.of(ProxyComponent.PID + ": stop.grace.seconds=ten is not a whole number; keeping the"
                    + " last good configuration"), lines);
            assertEquals(java.time.Duration.ofSeconds(3), again.settingsInForce().getKey().stopGrace());
        } finally {
            again.deactivate();
        }
    }

    @ParameterizedTest(name = "{0}={1}")
    @MethodSource("healthKeys")
    void shouldKeepTheHealthChecksLastGoodConfigurationWhenAValueHasTheWrongType(String key, Object bad) {
        Map<String, Object> good = new HashMap<>(Map.of("shm.min.free.bytes", "5", "key.file", "/k"));
        HealthCheckComponent component = new HealthCheckComponent(good, healthConfigurations, lines::add);
        HealthCheckComponent.Settings before = component.settings();
        Map<String, Object> next = new HashMap<>(Map.of("shm.min.free.bytes", "9", "key.file", "/other"));
        next.put(key, bad);

        component.modified(next);

        assertEquals(List.of(HealthCheckComponent.PID + ": " + expected(key, bad)
                + "; keeping the last good configuration"), lines);
        assertEquals(before, component.settings());
        assertEquals(5L, component.settings().shmMinFreeBytes());
    }

    @ParameterizedTest(name = "{0}={1}")
    @MethodSource("healthKeys")
    void shouldNotStartTheHealthChecksWithoutAnyGoodConfiguration(String key, Object bad) {
        Map<String, Object> first = new HashMap<>();
        first.put(key, bad);
        HealthCheckComponent component = new HealthCheckComponent(first, healthConfigurations, lines::add);
        assertEquals(List.of(HealthCheckComponent.PID + ": " + expected(key, bad)
                + "; no good configuration yet: not started until the value is fixed"), lines);
        RejectedConfigurationException e = assertThrows(RejectedConfigurationException.class, component::activate);
        assertEquals(List.of(HealthCheckComponent.PID + ": " + e.getMessage()), lines);
    }
}
