package org.mpiproxy.api.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class CheckedConfigurationTest {

    @interface Config {
        boolean abort_on_failure() default true;

        int stop_grace_seconds() default 10;

        long hold_limit_bytes() default 1048576L;

        String log_directory() default "";

        String my__key() default "x";
    }

    private final CheckedConfiguration<Config> checked = new CheckedConfiguration<>(Config.class);

    @Test
    void shouldMapAttributeNamesToKeysAsDeclarativeServicesDoes() {
        assertEquals(List.of("abort.on.failure", "hold.limit.bytes", "log.directory", "my_key",
                "stop.grace.seconds"), checked.keys());
        assertEquals("a$b", CheckedConfiguration.key("a$$b"));
        assertEquals("ab", CheckedConfiguration.key("a$b"));
    }

    @Test
    void shouldTakeDefaultsForMissingKeys() {
        Config c = checked.typed(Map.of());
        assertTrue(c.abort_on_failure());
        assertEquals(10, c.stop_grace_seconds());
        assertEquals(1048576L, c.hold_limit_bytes());
        assertEquals("", c.log_directory());
    }

    @Test
    void shouldAcceptTextAndTypedValues() {
        Config c = checked.typed(Map.of("abort.on.failure", "FALSE", "stop.grace.seconds", " 7 ",
                "hold.limit.bytes", 5, "log.directory", "/tmp/x"));
        assertFalse(c.abort_on_failure());
        assertEquals(7, c.stop_grace_seconds());
        assertEquals(5L, c.hold_limit_bytes());
        assertEquals("/tmp/x", c.log_directory());
        assertFalse(checked.typed(Map.of("abort.on.failure", Boolean.FALSE)).abort_on_failure());
        assertEquals(3, checked.typed(Map.of("stop.grace.seconds", new String[] {"3"})).stop_grace_seconds());
    }

    @Test
    void shouldRefuseBooleanOtherThanTrueOrFalse() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> checked.typed(Map.of("abort.on.failure", "yes")));
        assertEquals("abort.on.failure=yes is not true or false", e.getMessage());
    }

    @Test
    void shouldRefuseNonNumericAndOutOfTypeIntegers() {
        assertEquals("stop.grace.seconds=ten is not a whole number", assertThrows(IllegalArgumentException.class,
                () -> checked.typed(Map.of("stop.grace.seconds", "ten"))).getMessage());
        assertEquals("stop.grace.seconds=2.5 is not a whole number", assertThrows(IllegalArgumentException.class,
                () -> checked.typed(Map.of("stop.grace.seconds", 2.5))).getMessage());
        assertEquals("stop.grace.seconds=4294967296 is not a whole number in -2147483648..2147483647",
                assertThrows(IllegalArgumentException.class,
                        () -> checked.typed(Map.of("stop.grace.seconds", "4294967296"))).getMessage());
        assertEquals("hold.limit.bytes=1e6 is not a whole number", assertThrows(IllegalArgumentException.class,
                () -> checked.typed(Map.of("hold.limit.bytes", "1e6"))).getMessage());
    }

    @Test
    void shouldRefuseSeveralValuesForOneKey() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> checked.typed(Map.of("log.directory", List.of("/a", "/b"))));
        assertEquals("log.directory=[/a, /b] is not a single value (lists are comma-separated text)",
                e.getMessage());
    }

    @Test
    void shouldKeepTheLastGoodConfigurationOnBadActivation() {
        List<String> lines = new ArrayList<>();
        Config good = checked.activation(Map.of("stop.grace.seconds", "3"), c -> c, lines::add);
        assertEquals(List.of(), lines);
        assertSame(good, checked.lastGood());
        Config again = checked.activation(Map.of("stop.grace.seconds", "three"), c -> c, lines::add);
        assertSame(good, again);
        assertEquals(List.of("stop.grace.seconds=three is not a whole number; keeping the last good configuration"),
                lines);
    }

    @Test
    void shouldRefuseToStartWithoutAnyGoodConfiguration() {
        List<String> lines = new ArrayList<>();
        RejectedConfigurationException e = assertThrows(RejectedConfigurationException.class,
                () -> checked.activation(Map.of("abort.on.failure", "yes"), c -> c, lines::add));
        assertEquals(List.of("abort.on.failure=yes is not true or false; no good configuration yet: not started"
                + " until the value is fixed"), lines);
        assertEquals(lines.get(0), e.getMessage());
        assertEquals(0, e.getStackTrace().length);
        assertNull(checked.lastGood());
    }

    @Test
    void shouldApplyTheComponentsOwnChecks() {
        List<String> lines = new ArrayList<>();
        assertThrows(RejectedConfigurationException.class, () -> checked.activation(Map.of("stop.grace.seconds", "-1"),
                c -> {
                    throw new IllegalArgumentException("stop.grace.seconds=" + c.stop_grace_seconds()
                            + " must be >= 0");
                }, lines::add));
        assertTrue(lines.get(0).startsWith("stop.grace.seconds=-1 must be >= 0; "), lines.get(0));
    }
}
