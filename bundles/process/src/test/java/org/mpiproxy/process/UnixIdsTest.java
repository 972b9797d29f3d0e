package org.mpiproxy.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** User and group names to their ids through the C library, as the node's user database has them. */
class UnixIdsTest {

    @BeforeEach
    void linuxOnly() {
        assumeTrue(System.getProperty("os.name").toLowerCase().contains("linux"), "Linux only");
    }

    @Test
    void shouldResolveRootToZero() {
        assertEquals(0, UnixIds.uid("root"));
        assertEquals(0, UnixIds.gid("root"));
    }

    @Test
    void shouldResolveAnotherUserAndGroupAsTheUserDatabaseHasThem() throws Exception {
        String[] nobody = entry(Path.of("/etc/passwd"), "nobody");
        assumeTrue(nobody != null, "no user nobody in /etc/passwd");
        assertEquals(Long.parseLong(nobody[2]), UnixIds.uid("nobody"));
        String[] nogroup = entry(Path.of("/etc/group"), "nogroup");
        assumeTrue(nogroup != null, "no group nogroup in /etc/group");
        assertEquals(Long.parseLong(nogroup[2]), UnixIds.gid("nogroup"));
        assertEquals(65534, UnixIds.uid("nobody"), "Debian's nobody");
    }

    @Test
    void shouldTakeANameOfDigitsAsThatNumber() {
        assertEquals(4321, UnixIds.uid("4321"));
        assertEquals(0, UnixIds.gid("0"));
        assertEquals(UnixIds.MAX_ID, UnixIds.gid("4294967295"));
        assertEquals("id 4294967296 is not 0..4294967295",
                assertThrows(IllegalArgumentException.class, () -> UnixIds.uid("4294967296")).getMessage());
        assertEquals("id 99999999999999999999 is not 0..4294967295",
                assertThrows(IllegalArgumentException.class, () -> UnixIds.uid("99999999999999999999")).getMessage());
    }

    @Test
    void shouldRefuseAnUnknownNameInOneLine() {
        assertEquals("no user named mpiproxy-nobody-here on this node",
                assertThrows(IllegalArgumentException.class, () -> UnixIds.uid("mpiproxy-nobody-here")).getMessage());
        assertEquals("no group named mpiproxy-nobody-here on this node",
                assertThrows(IllegalArgumentException.class, () -> UnixIds.gid("mpiproxy-nobody-here")).getMessage());
        assertEquals("\"\" is not a user name", assertThrows(IllegalArgumentException.class,
                () -> UnixIds.uid("")).getMessage());
    }

    /** @return the fields of the line of {@code name} in a passwd or group file, or {@code null} */
    private static String[] entry(Path file, String name) throws Exception {
        List<String> lines = Files.readAllLines(file);
        for (String line : lines) {
            String[] fields = line.split(":");
            if (fields.length > 2 && fields[0].equals(name)) {
                return fields;
            }
        }
        return null;
    }
}
