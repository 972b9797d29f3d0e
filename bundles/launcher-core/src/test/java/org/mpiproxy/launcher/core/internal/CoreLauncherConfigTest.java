package org.mpiproxy.launcher.core.internal;

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

/** Every key of org.mpiproxy.launcher.core: a value of the wrong type is one line, and the last good values stay. */
class CoreLauncherConfigTest {

    private final CheckedConfiguration<CoreLauncherComponent.Config> configurations =
            new CheckedConfiguration<>(CoreLauncherComponent.Config.class);
    private final List<String> lines = new ArrayList<>();

    @TempDir
    Path temp;

    /** Each key with a value its type does not allow. */
    static Stream<Object[]> badValues() {
        CheckedConfiguration<CoreLauncherComponent.Config> c = new CheckedConfiguration<>(CoreLauncherComponent.Config.class);
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

    private Map<String, Object> good() {
        Map<String, Object> m = new HashMap<>();
        m.put("program.directory", temp.resolve("programs").toString());
        m.put("cache.directory", temp.resolve("cache").toString());
        m.put("max.image.size", "4096");
        m.put("image.digests", "");
        m.put("environment.allowlist", "PATH,HOME");
        m.put("rank.user", "");
        return m;
    }

    @ParameterizedTest(name = "{0}={1}")
    @MethodSource("badValues")
    void shouldKeepTheLastGoodConfigurationWhenAValueHasTheWrongType(String key, Object bad) {
        CoreLauncherComponent component = new CoreLauncherComponent(good(), configurations, lines::add);
        Map<String, Object> next = good();
        next.put("program.directory", temp.resolve("other").toString());
        next.put(key, bad);

        component.modified(next);

        assertEquals(List.of(CoreLauncherComponent.PID + ": " + expected(key, bad)
                + "; keeping the last good configuration, images in " + temp.resolve("programs")), lines);
        assertEquals(temp.resolve("programs"), component.programDirectory());
    }

    @ParameterizedTest(name = "{0}={1}")
    @MethodSource("badValues")
    void shouldNotStartWithoutAnyGoodConfiguration(String key, Object bad) {
        Map<String, Object> first = good();
        first.put(key, bad);
        assertThrows(RejectedConfigurationException.class, () -> new CoreLauncherComponent(first, configurations, lines::add));
        assertEquals(List.of(CoreLauncherComponent.PID + ": " + expected(key, bad)
                + "; no good configuration yet: not started until the value is fixed"), lines);
    }

    @Test
    void shouldReactivateWithTheLastGoodConfiguration() {
        new CoreLauncherComponent(good(), configurations, lines::add);
        Map<String, Object> bad = good();
        bad.put("rank.user", List.of("1:1", "2:2"));

        CoreLauncherComponent again = new CoreLauncherComponent(bad, configurations, lines::add);

        assertEquals(List.of(CoreLauncherComponent.PID + ": rank.user=[1:1, 2:2] is not a single value (lists are comma-separated"
                + " text); keeping the last good configuration"), lines);
        assertEquals(temp.resolve("programs"), again.programDirectory());
    }
}
