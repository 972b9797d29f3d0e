package org.mpiproxy.launcher.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.RankIdentity;
import org.mpiproxy.api.RankProcess;
import org.mpiproxy.process.RankUser;

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

    private static Map<String, Object> with(Map<String, Object> base, String key, Object value) {
        Map<String, Object> m = new HashMap<>(base);
        m.put(key, value);
        return m;
    }

    @Test
    void shouldKeepTheLastGoodConfigurationForEveryBadValue() throws Exception {
        Map<String, Object> good = Map.of("program.directory", temp.resolve("programs").toString(),
                "cache.directory", temp.resolve("cache").toString(), "max.image.size", 4096L);
        CoreLauncherComponent component = new CoreLauncherComponent(config(good));
        PinnedCoreLauncher before = component.launcher();
        Path missingList = temp.resolve("no-digests");

        Map<Map<String, Object>, String> bad = new LinkedHashMap<>();
        bad.put(with(good, "program.directory", "images"), "program.directory=images must be an absolute path");
        bad.put(with(good, "cache.directory", "cache"), "cache.directory=cache must be an absolute path");
        bad.put(with(good, "max.image.size", -1L), "max.image.size=-1 must be > 0");
        bad.put(with(good, "image.digests", missingList.toString()), "image.digests=" + missingList
                + " cannot be read: java.nio.file.NoSuchFileException: " + missingList);
        bad.put(with(good, "environment.allowlist", "A*B"),
                "environment.allowlist=A*B: 'A*B' is not a variable name (optionally ending in *)");
        bad.put(with(good, "rank.user", "1:x"), "rank.user=1:x must be a numeric <uid>:<gid>");
        for (Map.Entry<Map<String, Object>, String> e : bad.entrySet()) {
            assertEquals(e.getValue(), component.reconfigure(config(e.getKey())), "the message names key and value");
            assertEquals(before, component.launcher(), "the last good launcher stays");
        }
        component.modified(with(good, "max.image.size", 0L));
        assertEquals(before, component.launcher());
        assertEquals(4096L, component.launcher().images().maxImageSize());

        assertNull(component.reconfigure(config(with(good, "max.image.size", 8192L))));
        assertEquals(8192L, component.launcher().images().maxImageSize(), "a good limit applies at once");
        assertEquals(temp.resolve("programs"), component.programDirectory());
    }

    @Test
    void shouldRunCoreRanksAsTheRankUserWhenRoot() throws Exception {
        assumeTrue(RankUser.isRoot(), "needs root");
        assumeTrue(CpuList.parse(AllowedCpus.ofThisProcess().list()).get(1), "needs CPU 1 among the allowed CPUs");
        Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path programs = Files.createDirectories(temp.resolve("programs"));
        TestImages.writeImage(programs, "whoami", TestImages.script("echo \"$(id -u):$(id -g) $$\"\n"));
        CoreLauncherComponent component = new CoreLauncherComponent(config(Map.of(
                "program.directory", programs.toString(), "cache.directory", temp.resolve("cache").toString(),
                "rank.user", "65534:65534")));

        RankProcess p = component.launch(new LaunchRequest(0x5L, 1, 2, 1, "whoami", List.of(),
                temp.resolve("rank-1.chan"), Map.of(), temp.resolve("logs")));

        assertEquals(0, p.onExit().get(60, TimeUnit.SECONDS));
        assertEquals("65534:65534 " + p.pid() + "\n", Files.readString(temp.resolve("logs").resolve("rank-1.out")),
                "unprivileged, with setsid, setpriv and taskset exec'd in place");
        assertEquals("rwx--x---", PosixFilePermissions.toString(Files.getPosixFilePermissions(temp.resolve("cache"))));
        assertEquals(65534, ((Number) Files.getAttribute(temp.resolve("cache"), "unix:gid")).intValue());
    }

    @Test
    void shouldRunCoreRanksAsTheJobsUserFromAnImageOnlyItsGroupRuns() throws Exception {
        assumeTrue(RankUser.isRoot(), "needs root");
        assumeTrue(CpuList.parse(AllowedCpus.ofThisProcess().list()).get(1), "needs CPU 1 among the allowed CPUs");
        Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path programs = Files.createDirectories(temp.resolve("programs"));
        TestImages.writeImage(programs, "whoami", TestImages.script("echo \"$(id -u):$(id -g) $$\"\n"));
        Path cache = temp.resolve("cache");
        CoreLauncherComponent component = new CoreLauncherComponent(config(Map.of(
                "program.directory", programs.toString(), "cache.directory", cache.toString(),
                "rank.user", "1:1")));
        Path logs = temp.resolve("logs").resolve("job-0000000000000005");

        RankProcess p = component.launch(new LaunchRequest(0x5L, 1, 2, 1, "whoami", List.of(),
                temp.resolve("rank-1.chan"), Map.of(), logs, false, new RankIdentity(65534, 65534)));

        assertEquals(0, p.onExit().get(60, TimeUnit.SECONDS));
        Path out = logs.resolve("rank-1.out");
        assertEquals("65534:65534 " + p.pid() + "\n", Files.readString(out), "the job's user, not rank.user");
        assertEquals(65534, Files.getAttribute(out, "unix:uid", LinkOption.NOFOLLOW_LINKS));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(out)));
        assertEquals(65534, Files.getAttribute(logs, "unix:uid", LinkOption.NOFOLLOW_LINKS));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(logs)));
        Path groupCache = cache.resolve(ImageCache.GROUPS).resolve("65534");
        assertEquals("rwx--x---", PosixFilePermissions.toString(Files.getPosixFilePermissions(groupCache)));
        assertEquals(65534, Files.getAttribute(groupCache, "unix:gid", LinkOption.NOFOLLOW_LINKS));
        assertEquals("rwx--x--x", PosixFilePermissions.toString(Files.getPosixFilePermissions(cache)),
                "searchable, not listable");
        assertEquals(1, Files.getAttribute(cache, "unix:gid", LinkOption.NOFOLLOW_LINKS), "still rank.user's group");
    }
}
