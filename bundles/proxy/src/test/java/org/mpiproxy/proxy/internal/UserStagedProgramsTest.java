package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.RankIdentity;
import org.mpiproxy.process.RankUser;
import org.mpiproxy.process.StagedFiles;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.JobCredential;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.NodeIds;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/**
 * Programs a user stages with her job key (docs/protocol-v2.md 4.1, 5.8) are hers only: they land
 * in her own directory {@code staged/u<uid>}, hers with {@code rwx------}, each program hers with
 * {@code r-x------}; her next job finds them there, another user's job copies the same content again
 * into her own; a key holder's stay shared as before. A {@code u<uid>} that is another's or a link
 * is refused in one line and never followed. Giving files away needs root.
 */
class UserStagedProgramsTest {

    private static final InetSocketAddress HOST = new InetSocketAddress("127.0.0.1", 40001);
    private static final long JOB = 0x5151L;
    private static final long NOW = 1_767_225_600_000L;
    private static final long HOUR = 3_600_000;
    private static final int CHUNK = 1000;
    private static final RankIdentity NOBODY = new RankIdentity(65534, 65534);
    private static final RankIdentity DAEMON = new RankIdentity(1, 1);

    @TempDir
    Path dir;

    private String karafData;
    private final RecordingTransport transport = new RecordingTransport();
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final List<V2Dispatcher> dispatchers = new ArrayList<>();
    /** Hosts of one test draw their nonces from apart: requests of key id 0 share one replay cache. */
    private long nonces;

    @BeforeEach
    void privateData() {
        assumeTrue(RankUser.isRoot(), "giving staged programs to their users needs root");
        karafData = System.getProperty("karaf.data");
        System.setProperty("karaf.data", dir.resolve("data").toString());
    }

    @AfterEach
    void tearDown() {
        dispatchers.forEach(V2Dispatcher::close);
        timer.shutdownNow();
        if (karafData == null) {
            System.clearProperty("karaf.data");
        } else {
            System.setProperty("karaf.data", karafData);
        }
    }

    private V2Dispatcher proxy() {
        V2Dispatcher d = new V2Dispatcher(new FakeChannelManager(),
                new ProxySettings(Path.of("logs"), 1 << 20, Duration.ofSeconds(30), Duration.ofSeconds(1)),
                new V2Settings(V2Datagrams.KEYS, V2Datagrams.NODE, Duration.ofSeconds(30), 1024, 1448,
                        Duration.ofSeconds(300), V2Settings.DEFAULT_MAX_MESSAGE_BYTES, StagedPrograms.MAX_FILE_BYTES,
                        1024, V2Settings.DEFAULT_CREDENTIALS_MAX, false),
                coreId -> new FakeLauncher(), transport::wakeup, Runnable::run, timer, () -> NOW);
        d.refusalClock(() -> NOW * 1_000_000);
        dispatchers.add(d);
        return d;
    }

    /** A host: a user's, holding only her job key (and presenting her credential first), or a key holder's. */
    private final class Host {
        final V2Datagrams datagrams;
        final long jobId;

        /** A key holder's host. */
        Host(long jobId) {
            this.datagrams = new V2Datagrams(NOW);
            this.jobId = jobId;
        }

        /** A user's host, her credential presented to {@code proxy}. */
        Host(V2Dispatcher proxy, long jobId, RankIdentity user) {
            JobCredential credential = new JobCredential(1, user.uid(), user.gid(), jobId, NOW - 1000, NOW + HOUR,
                    NodeIds.of(V2Datagrams.NODE), 77);
            this.datagrams = new V2Datagrams(ClusterKeys.ofJobKey(credential.jobKey(V2Datagrams.KEYS)),
                    V2Datagrams.NODE, NOW);
            this.datagrams.keyId = JobCredential.JOB_KEY_ID;
            this.datagrams.nonce.set(nonces += 1_000_000);
            this.jobId = jobId;
            deliver(proxy, datagrams.credential(jobId, credential.encode(V2Datagrams.KEYS)));
            assertEquals(MpiErrors.SUCCESS, reply().result(), "credential accepted");
        }

        /** Fragment {@code index} of {@code content}; -1: the probe. */
        ByteBuffer stage(byte[] content, int index) {
            ByteBuffer b = V2Datagrams.buffer();
            long count = Math.max(1, (content.length + CHUNK - 1) / CHUNK);
            int length = index < 0 ? 0 : Math.min(CHUNK, content.length - index * CHUNK);
            datagrams.header(b, V2HeaderDescriptor.OP_STAGE, jobId, 0).argument(content.length).tag(CHUNK)
                    .sequence(Math.max(0, index)).ack(index < 0 ? 0 : count)
                    .payloadLength(StagedPrograms.DIGEST_LENGTH + length);
            b.put(V2HeaderDescriptor.HEADER_LENGTH, StagedPrograms.sha256(content));
            if (length > 0) {
                b.put(V2HeaderDescriptor.HEADER_LENGTH + StagedPrograms.DIGEST_LENGTH, content, index * CHUNK, length);
            }
            return datagrams.finish(b);
        }

        /** Probes, then sends every fragment: @return the last reply's argument (1: the node has it) */
        long stageAll(V2Dispatcher proxy, byte[] content) {
            deliver(proxy, stage(content, -1));
            V2HeaderFlyweight probe = reply();
            assertEquals(MpiErrors.SUCCESS, probe.result());
            if (probe.argument() == 1) {
                return 1;
            }
            long argument = 0;
            for (int i = 0; i * CHUNK < content.length; i++) {
                deliver(proxy, stage(content, i));
                V2HeaderFlyweight r = reply();
                assertEquals(MpiErrors.SUCCESS, r.result());
                argument = r.argument();
            }
            return argument;
        }

        /** @return the probe's answer: 1 when the node has the program for this host */
        long probe(V2Dispatcher proxy, byte[] content) {
            deliver(proxy, stage(content, -1));
            V2HeaderFlyweight r = reply();
            assertEquals(MpiErrors.SUCCESS, r.result());
            return r.argument();
        }
    }

    private void deliver(V2Dispatcher proxy, ByteBuffer datagram) {
        proxy.onDatagram(datagram, HOST, transport);
        proxy.doWork(transport);
    }

    /** The one reply since the last call. */
    private V2HeaderFlyweight reply() {
        List<RecordingTransport.Sent> sent = transport.take();
        assertEquals(1, sent.size(), "replies");
        return new V2HeaderFlyweight().wrap(sent.get(0).bytes, 0);
    }

    private static byte[] content(int seed) {
        byte[] b = new byte[2500];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static String owner(Path path) throws IOException {
        Map<String, Object> a = Files.readAttributes(path, "unix:uid,gid", LinkOption.NOFOLLOW_LINKS);
        return a.get("uid") + ":" + a.get("gid");
    }

    private static String mode(Path path) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS));
    }

    private static List<String> names(Path directory) throws IOException {
        try (Stream<Path> files = Files.list(directory)) {
            return files.map(f -> f.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void shouldKeepAUsersProgramInHerOwnDirectoryForHerJobsOnly() throws IOException {
        V2Dispatcher proxy = proxy();
        Path staged = StagedFiles.directory(System::getProperty);
        byte[] content = content(1);
        String name = StagedFiles.name(StagedPrograms.sha256(content));

        assertEquals(1, new Host(proxy, JOB, NOBODY).stageAll(proxy, content), "complete");

        Path own = staged.resolve("u65534");
        assertEquals("65534:65534", owner(own));
        assertEquals("rwx------", mode(own));
        assertEquals("65534:65534", owner(own.resolve(name)));
        assertEquals("r-x------", mode(own.resolve(name)));
        assertArrayEquals(content, Files.readAllBytes(own.resolve(name)));
        assertEquals(List.of("u65534"), names(staged), "nothing shared, no partial file left");
        assertEquals("rwx--x--x", mode(staged));

        assertEquals(1, new Host(proxy, JOB + 1, NOBODY).probe(proxy, content),
                "her next job finds it: nothing is copied again");
        assertEquals(0, new Host(proxy, JOB + 2, DAEMON).probe(proxy, content), "not another user's");
        assertEquals(0, new Host(JOB + 3).probe(proxy, content), "not shared with key holders either");

        assertEquals(1, new Host(proxy, JOB + 2, DAEMON).stageAll(proxy, content), "hers, copied again");
        assertEquals("1:1", owner(staged.resolve("u1")));
        assertEquals("1:1", owner(staged.resolve("u1").resolve(name)));
        assertEquals("r-x------", mode(staged.resolve("u1").resolve(name)));
        assertEquals("65534:65534", owner(own.resolve(name)), "the first user's copy stays hers");
        assertEquals(List.of("u1", "u65534"), names(staged));
    }

    @Test
    void shouldKeepAKeyHoldersProgramSharedAsBefore() throws IOException {
        V2Dispatcher proxy = proxy();
        Path staged = StagedFiles.directory(System::getProperty);
        byte[] content = content(2);
        String name = StagedFiles.name(StagedPrograms.sha256(content));

        assertEquals(1, new Host(JOB).stageAll(proxy, content));

        assertEquals(List.of(name), names(staged));
        assertEquals("0:0", owner(staged.resolve(name)));
        assertEquals("rwxr-xr-x", mode(staged.resolve(name)));
        assertEquals(0, new Host(proxy, JOB + 1, NOBODY).probe(proxy, content),
                "the cache is per directory: a user stages into hers (her jobs still find the shared one)");
    }

    @Test
    void shouldRefuseInOneLineAUsersDirectoryOfAnotherOwnerOrThatOthersMayWrite() throws IOException {
        Path staged = dir.resolve("staged");
        byte[] content = content(3);
        byte[] digest = StagedPrograms.sha256(content);
        StagedPrograms s = new StagedPrograms(staged);
        Path own = Files.createDirectories(staged.resolve("u65534"));
        Files.setPosixFilePermissions(own, PosixFilePermissions.fromString("rwx------"));

        StagedPrograms.Outcome anothers = first(s, NOBODY, digest, content);

        assertEquals(MpiErrors.ERR_IO, anothers.result());
        assertEquals("cannot store u65534/" + StagedFiles.name(digest) + ": staged directory " + own
                + " is owned by uid 0, not by uid 65534 whose programs it holds; refusing to use it",
                anothers.problem());
        assertEquals(List.of(), names(own), "nothing written there");

        Files.setAttribute(own, "unix:uid", 65534);
        Files.setPosixFilePermissions(own, PosixFilePermissions.fromString("rwxrwxrwx"));
        StagedPrograms.Outcome open = first(s, NOBODY, digest, content);
        assertEquals(MpiErrors.ERR_IO, open.result());
        assertTrue(open.problem().endsWith(" can be written by its group or others (rwxrwxrwx); refusing to use it"),
                open.problem());
        assertFalse(open.problem().contains("\n"));
        assertEquals(List.of(), names(own));
    }

    @Test
    void shouldNotFollowASymbolicLinkInPlaceOfAUsersDirectory() throws IOException {
        Path staged = Files.createDirectory(dir.resolve("staged"));
        byte[] content = content(4);
        byte[] digest = StagedPrograms.sha256(content);
        String name = StagedFiles.name(digest);
        // another user's directory, with the very program
        Path others = Files.createDirectory(staged.resolve("u1"));
        Files.write(others.resolve(name), content);
        Path link = Files.createSymbolicLink(staged.resolve("u65534"), others);
        StagedPrograms s = new StagedPrograms(staged);

        StagedPrograms.Outcome probe = s.onFragment(NOBODY, content.length, 0, 0, CHUNK,
                ByteBuffer.wrap(digest), 0, digest.length, 0);
        assertEquals(MpiErrors.ERR_IO, probe.result());
        assertFalse(probe.complete(), "the program behind the link is not hers");
        assertEquals("cannot store u65534/" + name + ": staged directory " + link
                + " is a symbolic link; refusing to use it", probe.problem());

        assertEquals(MpiErrors.ERR_IO, first(s, NOBODY, digest, content).result());
        assertEquals(List.of(name), names(others), "nothing written behind the link");
        assertTrue(Files.isSymbolicLink(link));
    }

    /** The first fragment of {@code content} from {@code user}. */
    private static StagedPrograms.Outcome first(StagedPrograms s, RankIdentity user, byte[] digest, byte[] content) {
        ByteBuffer b = ByteBuffer.allocate(StagedPrograms.DIGEST_LENGTH + CHUNK);
        b.put(digest).put(content, 0, CHUNK);
        return s.onFragment(user, content.length, 0, (content.length + CHUNK - 1) / CHUNK, CHUNK, b, 0, b.capacity(),
                0);
    }
}
