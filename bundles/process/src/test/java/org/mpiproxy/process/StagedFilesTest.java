package org.mpiproxy.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.LaunchException;
import org.mpiproxy.api.PrivateDirectories;
import org.mpiproxy.api.RankIdentity;

/**
 * Where a job's staged programs are looked up (docs/protocol-v2.md 5.8): a user's job in her own
 * directory, then the shared one; a key holder's job in the shared one only; a user's directory
 * that is a link, another's, or writable by others is refused in one line, never followed.
 */
class StagedFilesTest {

    @TempDir
    Path temp;

    private long self() {
        long uid = PrivateDirectories.currentUid();
        assumeTrue(uid >= 0, "the owner of /proc/self tells this process's uid");
        return uid;
    }

    private Path staged() throws Exception {
        return Files.createDirectory(temp.resolve("staged"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx--x--x")));
    }

    @Test
    void shouldLookInTheUsersOwnDirectoryFirstThenTheSharedOneAndForAKeyHolderInTheSharedOneOnly() throws Exception {
        long uid = self();
        Path staged = staged();
        RankIdentity user = new RankIdentity(uid, 0);

        assertEquals(List.of(staged), StagedFiles.directories(staged, null));
        assertEquals(List.of(staged.resolve("u" + uid), staged), StagedFiles.directories(staged, user),
                "not made yet: looked up all the same");
        Files.createDirectory(staged.resolve("u" + uid),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        assertEquals(List.of(staged.resolve("u" + uid), staged), StagedFiles.directories(staged, user));
        assertNull(StagedFiles.problem(staged.resolve("u" + uid), uid));
    }

    @Test
    void shouldRefuseAUsersDirectoryThatIsALinkAnothersOrWritableByOthersInOneLine() throws Exception {
        long uid = self();
        Path staged = staged();
        Path other = Files.createDirectory(temp.resolve("other"));
        Path link = Files.createSymbolicLink(StagedFiles.userDirectory(staged, uid), other);

        LaunchException linked = assertThrows(LaunchException.class,
                () -> StagedFiles.directories(staged, new RankIdentity(uid, 0)));
        assertEquals("staged directory " + link + " is a symbolic link; refusing to use it", linked.getMessage());

        Files.delete(link);
        Path open = Files.createDirectory(StagedFiles.userDirectory(staged, uid));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        assertEquals("staged directory " + open + " can be written by its group or others (rwxrwxrwx); refusing to"
                + " use it", StagedFiles.problem(open, uid));

        long stranger = uid == 4242 ? 4243 : 4242;
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwx------"));
        Files.move(open, StagedFiles.userDirectory(staged, stranger));
        LaunchException anothers = assertThrows(LaunchException.class,
                () -> StagedFiles.directories(staged, new RankIdentity(stranger, 0)));
        assertEquals("staged directory " + StagedFiles.userDirectory(staged, stranger) + " is owned by uid " + uid
                + ", not by uid " + stranger + " whose programs it holds; refusing to use it", anothers.getMessage());
        assertFalse(anothers.getMessage().contains("\n"));
    }
}
