package org.mpiproxy.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The distribution as shipped has no password: its first start gives the console's and JMX's
 * user {@code karaf} a random one in {@code etc/users.properties} (owner only), the old default
 * {@code karaf}/{@code karaf} logs in nowhere, {@code bin/client} run by the file's owner logs in
 * without being told a password (nor JAVA_HOME), and a restart keeps the password it generated.
 */
class ConsoleLoginIT {

    private KarafNode node;

    @AfterEach
    void stopNode() throws InterruptedException {
        if (node != null) {
            node.stop();
        }
    }

    @Test
    void shouldGenerateTheOperatorsPasswordAtFirstStartAndRefuseTheOldDefault() throws Exception {
        Path target = Paths.get(System.getProperty("mpiproxy.itest.target"));
        Path distribution = Paths.get(System.getProperty("mpiproxy.itest.distribution"));
        Path work = target.resolve("console-login");
        KarafNode.deleteTree(work);
        Files.createDirectories(work);
        node = KarafNode.create("c1", distribution, work, "127.0.0.33");
        Path users = node.home().resolve("etc/users.properties");
        assertEquals(null, realm(users).getProperty("karaf"), "a user before the first start");

        node.start();
        node.awaitProxy(300);
        String password = password(users);
        assertTrue(password.matches("[0-9a-f]{48}"), "not 24 random bytes in hexadecimal: " + password);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(users)));
        assertTrue(Files.readString(node.home().resolve("karaf.out"))
                .contains("first start: user karaf of the console and JMX has a new random password"),
                "the first start says where the password is");

        String health = awaitConsole("mpi:health", "Health:", 120);
        assertTrue(health.contains("Health:"), health);
        // as an operator's shell runs it: no JAVA_HOME, java on the PATH
        ProcessBuilder plain = new ProcessBuilder(node.home().resolve("bin/client").toString(), "-r", "3", "-b")
                .directory(node.home().toFile()).redirectErrorStream(true);
        plain.environment().remove("JAVA_HOME");
        plain.environment().put("PATH", Path.of(System.getProperty("java.home"), "bin") + ":/usr/bin:/bin");
        Process client = plain.start();
        try (var in = client.getOutputStream()) {
            in.write("mpi:health\n".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        String plainOut = new String(client.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(client.waitFor(60, TimeUnit.SECONDS), "bin/client did not end");
        assertTrue(plainOut.contains("Health:"), plainOut);
        assertFalse(plainOut.contains("JAVA_HOME not set"), plainOut);

        String refused = node.console("karaf", "karaf", "mpi:health");
        assertFalse(refused.contains("Health:"), "karaf/karaf logged in: " + refused);

        JMXServiceURL jmx = new JMXServiceURL("service:jmx:rmi:///jndi/rmi://127.0.0.1:"
                + node.setting("org.apache.karaf.management.cfg", "rmiRegistryPort") + "/karaf-root");
        assertThrows(SecurityException.class,
                () -> JMXConnectorFactory.connect(jmx, Map.of(JMXConnector.CREDENTIALS, new String[] {"karaf", "karaf"}))
                        .close(), "JMX took karaf/karaf");
        try (JMXConnector connector = JMXConnectorFactory.connect(jmx,
                Map.of(JMXConnector.CREDENTIALS, new String[] {"karaf", password}))) {
            assertNotNull(connector.getMBeanServerConnection().getDefaultDomain());
        }

        node.stopKaraf();
        node.start();
        node.awaitProxy(300);
        assertEquals(password, password(users), "a restart generated another password");
    }

    private static Properties realm(Path users) throws IOException {
        Properties realm = new Properties();
        try (var in = Files.newBufferedReader(users)) {
            realm.load(in);
        }
        return realm;
    }

    private static String password(Path users) throws IOException {
        String line = realm(users).getProperty("karaf");
        assertNotNull(line, "no user karaf after the first start: " + Files.readString(users));
        return line.substring(0, line.indexOf(','));
    }

    private String awaitConsole(String command, String expected, long seconds) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        String out = node.console(command);
        while (!out.contains(expected)) {
            assertTrue(System.nanoTime() < deadline, "'" + command + "' printed no '" + expected + "' within "
                    + seconds + " s: " + out);
            Thread.sleep(500);
            out = node.console(command);
        }
        return out;
    }
}
