package org.mpiproxy.launcher.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CoreLauncherComponentTest {

    @TempDir
    Path temp;

    /** A Config whose values come from {@code values} (dotted keys), else the annotation defaults. */
    private static CoreLauncherComponent.Config config(Map<String, Object> values) {
        return (CoreLauncherComponent.Config) Proxy.newProxyInstance(CoreLauncherComponentTest.class.getClassLoader(),
                new Class<?>[] {CoreLauncherComponent.Config.class}, (proxy, method, args) -> {
                    String key = method.getName().replace('_', '.');
                    return values.containsKey(key) ? values.get(key) : method.getDefaultValue();
                });
    }

    @Test
    void shouldUseConfiguredDirectories() {
        CoreLauncherComponent component = new CoreLauncherComponent(config(Map.of(
                "program.directory", temp.resolve("programs").toString(),
                "cache.directory", temp.resolve("cache").toString())));

        assertEquals(temp.resolve("programs"), component.launcher().programDirectory());
    }

    @Test
    void shouldRejectNonPositiveMaxImageSize() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new CoreLauncherComponent(config(Map.of("max.image.size", 0L))));

        assertEquals("max.image.size=0 must be > 0", e.getMessage());
    }

    @Test
    void shouldDefaultMaxImageSizeToTwoHundredFiftySixMebibytes() {
        assertEquals(268435456L, config(Map.of()).max_image_size());
    }
}
