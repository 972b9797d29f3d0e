package org.mpiproxy.launcher.local.internal;

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

/** Every key of org.mpiproxy.launcher.local: a value of the wrong type is one line, and the last good values stay. */
class LocalLauncherConfigTest {

    private final CheckedConfiguration<LocalLauncherComponent.Config> configurations =
            new CheckedConfiguration<>(LocalLauncherComponent.Config.class);
    private final List<String> lines = new ArrayList<>();

    @TempDir
    Path temp;

    /** Each key with a value its type does not allow. */
    static Stream<Object[]> badValues() {
        CheckedConfiguration<LocalLauncherComponent.Config> c = new CheckedConfiguration<>(LocalLauncherComponent.Config.class);
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
        m.put("environment.allowlist", "PATH,HOME");
        m.put("rank.user", "");
        return m;
    }

    @ParameterizedTest(name = "{0}={1}")
    @MethodSource("badValues")
    void shouldKeepTheLastGoodConfigurationWhenAValueHasTheWrongType(String key, Object bad) {
        LocalLauncherComponent component = new LocalLauncherComponent(good(), configurations, lines::add);
        Map<String, Object> next = good();
        next.put("program.directory", temp.resolve("other").toString());
        next.put(key, bad);

        component.modified(next);

        assertEquals(List.of(LocalLauncherComponent.PID + ": " + expected(key, bad)
                + "; keeping the last good configuration, programs in " + temp.resolve("programs")), lines);
        assertEquals(temp.resolve("programs"), component.programDirectory());
    }

    @ParameterizedTest(name = "{0}={1}")
    @MethodSource("badValues")
    void shouldNotStartWithoutAnyGoodConfiguration(String key, Object bad) {
        Map<String, Object> first = good();
        first.put(key, bad);
        assertThrows(RejectedConfigurationException.class, () -> new LocalLauncherComponent(first, configurations, lines::add));
        assertEquals(List.of(LocalLauncherComponent.PID + ": " + expected(key, bad)
                + "; no good configuration yet: not started until the value is fixed"), lines);
    }

    @Test
    void shouldReactivateWithTheLastGoodConfiguration() {
        new LocalLauncherComponent(good(), configurations, lines::add);
        Map<String, Object> bad = good();
        bad.put("rank.user", List.of("1:1", "2:2"));

        LocalLauncherComponent again = new LocalLauncherComponent(bad, configurations, lines::add);

        assertEquals(List.of(LocalLauncherComponent.PID + ": rank.user=[1:1, 2:2] is not a single value (lists are comma-separated"
                + " text); keeping the last good configuration"), lines);
        assertEquals(temp.resolve("programs"), again.programDirectory());
    }

    @Test
    void shouldRefuseARelativeProgramPathEntryInOneLine() {
        LocalLauncherComponent component = new LocalLauncherComponent(good(), configurations, lines::add);
        Map<String, Object> next = good();
        next.put("program.path", "/usr/bin, bin");

        component.modified(next);

        assertEquals(List.of(LocalLauncherComponent.PID + ": program.path=bin must be an absolute path"
                + "; keeping the last good configuration, programs in " + temp.resolve("programs")), lines);
    }
}
