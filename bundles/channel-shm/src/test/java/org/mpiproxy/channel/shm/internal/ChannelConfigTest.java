package org.mpiproxy.channel.shm.internal;

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

/** Every key of org.mpiproxy.channel.shm: a value of the wrong type is one line, and the last good values stay. */
class ChannelConfigTest {

    private final CheckedConfiguration<MappedFileChannelManager.Config> configurations =
            new CheckedConfiguration<>(MappedFileChannelManager.Config.class);
    private final List<String> lines = new ArrayList<>();

    @TempDir
    Path dir;

    /** Each key with a value its type does not allow. */
    static Stream<Object[]> badValues() {
        CheckedConfiguration<MappedFileChannelManager.Config> c =
                new CheckedConfiguration<>(MappedFileChannelManager.Config.class);
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
        m.put("base.directory", dir.resolve("base").toString());
        m.put("ring.capacity", "8192");
        m.put("owner.user", "");
        return m;
    }

    @ParameterizedTest(name = "{0}={1}")
    @MethodSource("badValues")
    void shouldKeepTheLastGoodConfigurationWhenAValueHasTheWrongType(String key, Object bad) {
        MappedFileChannelManager manager = new MappedFileChannelManager(good(), configurations, lines::add);
        Map<String, Object> next = good();
        next.put("base.directory", dir.resolve("other").toString());
        next.put(key, bad);

        manager.modified(next);

        assertEquals(List.of(MappedFileChannelManager.PID + ": " + expected(key, bad)
                + "; keeping the last good configuration, channels in " + dir.resolve("base")
                + " with ring capacity 8192"), lines);
        assertEquals(dir.resolve("base"), manager.baseDirectory());
        assertEquals(8192, manager.ringCapacity());
    }

    @ParameterizedTest(name = "{0}={1}")
    @MethodSource("badValues")
    void shouldNotStartWithoutAnyGoodConfiguration(String key, Object bad) {
        Map<String, Object> first = good();
        first.put(key, bad);
        assertThrows(RejectedConfigurationException.class,
                () -> new MappedFileChannelManager(first, configurations, lines::add));
        assertEquals(List.of(MappedFileChannelManager.PID + ": " + expected(key, bad)
                + "; no good configuration yet: not started until the value is fixed"), lines);
    }

    @Test
    void shouldReactivateWithTheLastGoodConfiguration() {
        new MappedFileChannelManager(good(), configurations, lines::add);
        Map<String, Object> bad = good();
        bad.put("ring.capacity", "big");

        MappedFileChannelManager again = new MappedFileChannelManager(bad, configurations, lines::add);

        assertEquals(List.of(MappedFileChannelManager.PID + ": ring.capacity=big is not a whole number; keeping the"
                + " last good configuration"), lines);
        assertEquals(8192, again.ringCapacity());
    }
}
