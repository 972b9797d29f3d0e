package org.mpiproxy.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RankEnvironmentTest {

    @TempDir
    Path temp;

    @Test
    void shouldPassOnlyAllowedProxyVariablesThenTheRanksOwn() {
        Map<String, String> proxy = Map.of("PATH", "/bin", "LC_TIME", "C", "AWS_SECRET_ACCESS_KEY", "s3cr3t",
                "KARAF_HOME", "/opt/karaf", "HOME", "/root");
        Map<String, String> env = RankEnvironment.build(proxy, RankEnvironment.parseAllowlist("PATH, LC_*,HOME"),
                Map.of("MPIPROXY_RANK", "1", "HOME", "/job"));

        assertEquals(Map.of("PATH", "/bin", "LC_TIME", "C", "HOME", "/job", "MPIPROXY_RANK", "1"), env);
    }

    @Test
    void shouldRejectMalformedAllowlists() {
        assertThrows(IllegalArgumentException.class, () -> RankEnvironment.parseAllowlist("A=B"));
        assertThrows(IllegalArgumentException.class, () -> RankEnvironment.parseAllowlist("*X"));
        assertEquals(List.of("A", "B*"), RankEnvironment.parseAllowlist(" A ,, B* ,"));
    }

    @Test
    void shouldStartRanksWithNothingElseOfTheProxysEnvironment() throws Exception {
        Path out = temp.resolve("env.txt");
        Path script = TestScripts.write(temp, "report", "/usr/bin/env > \"$OUT\"\n");
        SpawnedRankProcess p = RankProcessStarter.start("report", List.of(script.toString()),
                Map.of("OUT", out.toString(), "MPIPROXY_RANK", "4"), temp.resolve("logs"), 1, 4, 0,
                OutputSettings.DEFAULT, RankEnvironment.parseAllowlist(RankEnvironment.DEFAULT_ALLOWLIST));
        assertEquals(0, p.onExit().get(60, TimeUnit.SECONDS));

        Set<String> names = new HashSet<>();
        for (String line : Files.readAllLines(out)) {
            names.add(line.substring(0, line.indexOf('=')));
        }
        List<String> allowlist = RankEnvironment.parseAllowlist(RankEnvironment.DEFAULT_ALLOWLIST);
        for (String name : names) {
            // the shell itself may add PWD, SHLVL and _
            assertTrue(RankEnvironment.allowed(name, allowlist) || Set.of("OUT", "MPIPROXY_RANK", "PWD", "SHLVL", "_")
                    .contains(name), "unexpected variable " + name + " in the rank's environment");
        }
        assertTrue(names.contains("MPIPROXY_RANK") && names.contains("OUT"), names.toString());
        assertTrue(System.getenv().keySet().stream().anyMatch(n -> !RankEnvironment.allowed(n, allowlist)),
                "the test JVM has variables that must not reach the rank");
    }
}
