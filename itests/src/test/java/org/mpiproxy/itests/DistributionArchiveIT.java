package org.mpiproxy.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The distribution archive as users unpack it with {@code tar -xzf}: layout, file modes and
 * the shipped configuration. Reads the archive only; no Karaf is started.
 */
class DistributionArchiveIT {

    private static final List<String> PIDS = List.of(
            "org.mpiproxy.transport.udp", "org.mpiproxy.channel.shm", "org.mpiproxy.launcher.local",
            "org.mpiproxy.launcher.core", "org.mpiproxy.proxy");

    private static Map<String, DistributionArchive.Entry> entries;

    @BeforeAll
    static void readArchive() throws IOException {
        Path archive = Paths.get(System.getProperty("mpiproxy.itest.distribution"));
        entries = DistributionArchive.read(archive, name -> name.startsWith("etc/") || name.equals("bin/setenv"));
    }

    @Test
    void shouldPackProgramsAsExecutables() {
        for (String name : List.of("mpiping", "mpiprime", "mpiecho", "mpiping.lz4", "mpiprime.lz4", "mpiecho.lz4",
                "mpijava")) {
            DistributionArchive.Entry program = entry("programs/" + name);
            assertEquals("755", Integer.toOctalString(program.mode()), program.name() + " mode");
        }
        assertNotNull(entries.get("programs/hostfile"), "programs/hostfile missing");
        assertEquals("644", Integer.toOctalString(entry("programs/mpi.jar").mode()), "the mpi package's jar");
    }

    @Test
    void shouldShipTheLauncherBesideItsScript() {
        assertFalse(entry("lib/cli/mpiproxy-cli.jar").directory());
    }

    @Test
    void shouldPackKarafScriptsAsExecutables() {
        for (String name : List.of("bin/karaf", "bin/start", "bin/stop", "bin/client", "bin/setenv", "bin/mpiproxy")) {
            assertTrue(entry(name).isExecutable(), name + " not executable");
        }
    }

    @Test
    void shouldShipADefaultConfigurationForEveryComponent() throws IOException {
        for (String pid : PIDS) {
            Properties cfg = properties("etc/" + pid + ".cfg");
            assertFalse(cfg.isEmpty(), pid + ".cfg has no keys");
        }
        assertEquals("127.0.0.1", properties("etc/org.mpiproxy.transport.udp.cfg").getProperty("address"));
        assertEquals("${karaf.home}/programs",
                properties("etc/org.mpiproxy.launcher.local.cfg").getProperty("program.directory"));
    }

    @Test
    void shouldBindConsolesToLoopbackOnly() throws IOException {
        assertEquals("127.0.0.1", properties("etc/org.apache.karaf.shell.cfg").getProperty("sshHost"));
        Properties management = properties("etc/org.apache.karaf.management.cfg");
        assertEquals("127.0.0.1", management.getProperty("rmiRegistryHost"));
        assertEquals("127.0.0.1", management.getProperty("rmiServerHost"));
    }

    @Test
    void shouldBootTheProxyFeature() throws IOException {
        // the assembly wraps the boot features into one generated feature, defined in a file in etc/
        Properties features = properties("etc/org.apache.karaf.features.cfg");
        String boot = features.getProperty("featuresBoot").trim();
        String repository = features.getProperty("featuresRepositories").trim();
        assertTrue(repository.startsWith("file:${karaf.etc}/"), "featuresRepositories: " + repository);
        String xml = entry("etc/" + repository.substring("file:${karaf.etc}/".length())).text();
        int start = xml.indexOf("<feature name=\"" + boot + "\"");
        assertTrue(start >= 0, "no boot feature " + boot + " in " + repository + ":\n" + xml);
        String bootFeature = xml.substring(start, xml.indexOf("</feature>\n", xml.indexOf("<bundle", start)));
        for (String feature : List.of("minimal", "eventadmin", "scr", "mpiproxy")) {
            assertTrue(bootFeature.matches("(?s).*>" + feature + "</feature>.*"), "boot lacks " + feature + ": "
                    + bootFeature);
        }
        assertTrue(xml.contains("<repository>mvn:org.mpiproxy/features/"), "the proxy's features repository:\n" + xml);
    }

    @Test
    void shouldStartEventAdminWithTheFramework() throws IOException {
        // pax-logging-api optionally imports its package: installed later, it would refresh the
        // logging API and every bundle wired to it on first boot
        String startup = entry("etc/startup.properties").text();
        assertTrue(startup.contains("org.apache.karaf.services.eventadmin"), startup);
    }

    @Test
    void shouldShipNoPasswordForTheConsoleOrJmx() throws IOException {
        DistributionArchive.Entry users = entry("etc/users.properties");
        assertEquals("600", Integer.toOctalString(users.mode()), "etc/users.properties mode");
        Properties realm = properties(users.name());
        // the group of the user generated at first start (bin/setenv), and no user at all
        assertNotNull(realm.getProperty("_g_:admingroup"), "no admingroup");
        assertEquals(java.util.Set.of("_g_:admingroup"), realm.stringPropertyNames(),
                "a shipped user is a password every copy of the distribution shares");
        List<String> keyUsers = properties("etc/keys.properties").stringPropertyNames().stream()
                .filter(k -> !k.startsWith("_g_:")).toList();
        assertTrue(keyUsers.isEmpty(), "a shipped key login: " + keyUsers);
    }

    @Test
    void shouldShipV1Off() throws IOException {
        // v1 is unauthenticated: served as shipped, any local user would start ranks as root
        assertEquals("false", properties("etc/org.mpiproxy.proxy.cfg").getProperty("v1.enabled"));
    }

    private static DistributionArchive.Entry entry(String name) {
        DistributionArchive.Entry entry = entries.get(name);
        assertNotNull(entry, name + " missing from the archive");
        return entry;
    }

    private static Properties properties(String name) throws IOException {
        Properties properties = new Properties();
        properties.load(new StringReader(entry(name).text()));
        return properties;
    }
}
