package org.mpiproxy.process;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.Map;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.Test;

class LauncherDirectoriesTest {

    private static UnaryOperator<String> props(Map<String, String> values) {
        return values::get;
    }

    @Test
    void shouldPreferConfiguredDirectory() {
        UnaryOperator<String> p = props(Map.of("karaf.home", "/k"));
        assertEquals(Path.of("/p"), LauncherDirectories.programDirectory(" /p ", p));
        assertEquals(Path.of("/c"), LauncherDirectories.dataDirectory("/c", p, "mpiproxy/images"));
    }

    @Test
    void shouldDefaultToKarafDirectories() {
        UnaryOperator<String> p = props(Map.of("karaf.home", "/k", "karaf.data", "/d", "user.dir", "/u"));
        assertEquals(Path.of("/k/programs"), LauncherDirectories.programDirectory("", p));
        assertEquals(Path.of("/d/mpiproxy/images"), LauncherDirectories.dataDirectory(" ", p, "mpiproxy/images"));
    }

    @Test
    void shouldFallBackToUserDirectoryOutsideKaraf() {
        UnaryOperator<String> p = props(Map.of("user.dir", "/u"));
        assertEquals(Path.of("/u/programs"), LauncherDirectories.programDirectory(null, p));
        assertEquals(Path.of("/u/data/mpiproxy/images"), LauncherDirectories.dataDirectory("", p, "mpiproxy/images"));
    }

    @Test
    void shouldDeriveDataFromKarafHomeWhenDataIsUnset() {
        assertEquals(Path.of("/k/data"), LauncherDirectories.data(props(Map.of("karaf.home", "/k"))));
    }
}
