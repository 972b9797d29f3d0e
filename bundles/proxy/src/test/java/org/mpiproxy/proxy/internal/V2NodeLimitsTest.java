package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledThreadPoolExecutor;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.JobCredential;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.NodeIds;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.pmi.PmiLimits;

/**
 * The limits that hold a node up (docs/operations.md, protocol-v2.md 5.1): the live ranks of one
 * job ({@code job.max.ranks}) and of one user's jobs together ({@code user.max.ranks}); an EXEC
 * beyond is refused with MPI_ERR_NO_MEM and the limit's line, and every other job and user is
 * served as before.
 */
class V2NodeLimitsTest {

    private static final InetSocketAddress HOST = new InetSocketAddress("127.0.0.1", 40001);
    private static final long JOB = 0x4242L;
    private static final long NOW = 1_767_225_600_000L;
    private static final long HOUR = 3_600_000;

    private final FakeChannelManager channels = new FakeChannelManager();
    private final FakeLauncher launcher = new FakeLauncher();
    private final RecordingTransport transport = new RecordingTransport();
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final V2Datagrams operator = new V2Datagrams(NOW);
    private V2Dispatcher proxy;
    private long nonces;

    @AfterEach
    void tearDown() {
        if (proxy != null) {
            proxy.close();
        }
        timer.shutdownNow();
    }

    private static V2Settings settings(int jobMaxRanks, int userMaxRanks) {
        return new V2Settings(V2Datagrams.KEYS, V2Datagrams.NODE, Duration.ofSeconds(30), 1024, 1448,
                Duration.ofSeconds(300), V2Settings.DEFAULT_MAX_MESSAGE_BYTES, StagedPrograms.MAX_FILE_BYTES, 1024,
                V2Settings.DEFAULT_CREDENTIALS_MAX, false, new NodeLimits(jobMaxRanks, userMaxRanks, PmiLimits.DEFAULT));
    }

    private void start(int jobMaxRanks, int userMaxRanks) {
        proxy = new V2Dispatcher(channels,
                new ProxySettings(Path.of("logs"), 1 << 20, Duration.ofSeconds(30), Duration.ofSeconds(1)),
                settings(jobMaxRanks, userMaxRanks), coreId -> launcher, transport::wakeup, Runnable::run, timer,
                () -> NOW);
    }

    /** A user's host: it holds the job key of its credential, nothing else. */
    private final class User {
        final V2Datagrams host;
        final long jobId;

        User(long jobId, long uid) {
            JobCredential credential = new JobCredential(1, uid, uid, jobId, NOW - 1000, NOW + HOUR,
                    NodeIds.of(V2Datagrams.NODE), 77);
            this.jobId = jobId;
            this.host = new V2Datagrams(ClusterKeys.ofJobKey(credential.jobKey(V2Datagrams.KEYS)), V2Datagrams.NODE,
                    NOW);
            this.host.keyId = JobCredential.JOB_KEY_ID;
            this.host.nonce.set(nonces += 1_000_000);
            assertEquals(MpiErrors.SUCCESS, deliver(host.credential(jobId, credential.encode(V2Datagrams.KEYS)))
                    .result());
        }

        V2HeaderFlyweight exec(int rank) {
            return deliver(host.exec(jobId, rank, 0, 16, "prog"));
        }
    }

    /** @return the one reply to the datagram */
    private V2HeaderFlyweight deliver(ByteBuffer datagram) {
        proxy.onDatagram(datagram, HOST, transport);
        proxy.doWork(transport);
        List<RecordingTransport.Sent> sent = transport.take();
        assertEquals(1, sent.size(), "replies");
        return new V2HeaderFlyweight().wrap(sent.get(0).bytes, 0);
    }

    private V2HeaderFlyweight exec(long jobId, int rank) {
        return deliver(operator.exec(jobId, rank, 0, 16, "prog"));
    }

    private static String reason(V2HeaderFlyweight reply) {
        byte[] text = new byte[reply.payloadLength()];
        reply.buffer().get(reply.payloadOffset(), text);
        return new String(text, StandardCharsets.UTF_8);
    }

    @Test
    void shouldStartExactlyJobMaxRanksOfAJobAndRefuseTheNextWithTheLimitsLine() {
        start(3, 100);
        for (int rank = 1; rank <= 3; rank++) {
            assertEquals(MpiErrors.SUCCESS, exec(JOB, rank).result(), "rank " + rank);
        }
        V2HeaderFlyweight refused = exec(JOB, 4);
        assertEquals(V2HeaderDescriptor.OP_EXEC, refused.operation());
        assertEquals(4, refused.rank());
        assertEquals(MpiErrors.ERR_NO_MEM, refused.result());
        assertEquals("job 0000000000004242 has 3 ranks on this node, job.max.ranks=3", reason(refused));
        assertEquals(3, launcher.requests.size(), "nothing started for the refused rank");
        assertEquals(1, proxy.counter(V2Counter.EXEC_JOB_MAX_RANKS));
        assertEquals(1, proxy.counter(V2Counter.EXEC_REJECTED));
        assertEquals(Long.valueOf(1), proxy.counters().get("v2.exec.refused.job.max.ranks"));

        assertEquals(MpiErrors.SUCCESS, exec(JOB + 1, 1).result(), "another job is not concerned");
        assertEquals(MpiErrors.SUCCESS, exec(JOB, 2).result(), "a rank the job has is answered as before");

        // a rank that ended and was answered makes room
        launcher.processes.get(0).exitWith(0);
        proxy.doWork(transport);
        transport.take();
        assertEquals(MpiErrors.SUCCESS, deliver(operator.terminate(JOB, 1)).result());
        assertEquals(MpiErrors.SUCCESS, exec(JOB, 4).result(), "room again");
        assertEquals(MpiErrors.ERR_NO_MEM, exec(JOB, 5).result());
    }

    @Test
    void shouldApplyAChangedLimitToTheNextExec() {
        start(2, 100);
        exec(JOB, 1);
        exec(JOB, 2);
        assertEquals(MpiErrors.ERR_NO_MEM, exec(JOB, 3).result());
        assertEquals(List.of(), proxy.reconfigure(settings(3, 100)), "applied at once");
        assertEquals(MpiErrors.SUCCESS, exec(JOB, 3).result());
        proxy.reconfigure(settings(1, 100));
        V2HeaderFlyweight refused = exec(JOB, 4);
        assertEquals("job 0000000000004242 has 3 ranks on this node, job.max.ranks=1", reason(refused));
        assertEquals(3, launcher.requests.size(), "running ranks are left alone");
    }

    @Test
    void shouldCountAllJobsOfAUserTogetherAndLeaveOtherUsersAndKeyHoldersAlone() {
        start(100, 3);
        User first = new User(JOB, 1000);
        assertEquals(MpiErrors.SUCCESS, first.exec(1).result());
        assertEquals(MpiErrors.SUCCESS, first.exec(2).result());
        User second = new User(JOB + 1, 1000);
        assertEquals(MpiErrors.SUCCESS, second.exec(1).result());
        V2HeaderFlyweight refused = second.exec(2);
        assertEquals(MpiErrors.ERR_NO_MEM, refused.result());
        assertEquals("user 1000 has 3 ranks on this node, user.max.ranks=3", reason(refused));
        assertEquals(MpiErrors.ERR_NO_MEM, new User(JOB + 2, 1000).exec(1).result(), "nor a new job of hers");
        assertEquals(2, proxy.counter(V2Counter.EXEC_USER_MAX_RANKS));
        assertEquals(0, proxy.counter(V2Counter.EXEC_JOB_MAX_RANKS));

        User other = new User(JOB + 3, 1001);
        for (int rank = 1; rank <= 3; rank++) {
            assertEquals(MpiErrors.SUCCESS, other.exec(rank).result(), "another user, rank " + rank);
        }
        assertEquals(MpiErrors.ERR_NO_MEM, other.exec(4).result(), "the other user has her own limit");
        for (int rank = 1; rank <= 5; rank++) {
            assertEquals(MpiErrors.SUCCESS, exec(JOB + 4, rank).result(), "a key holder's job, rank " + rank);
        }
        assertEquals(11, launcher.requests.size());
    }

    @Test
    void shouldNameTheKeyAndValueOfABadLimit() {
        assertEquals(NodeLimits.DEFAULT, NodeLimits.of(TestConfigs.of(ProxyConfig.class, Map.of())));
        assertEquals(new NodeLimits(7, 9, new PmiLimits(5, 6, 11_000_000_000L)), NodeLimits.of(TestConfigs.of(
                ProxyConfig.class, Map.of("job.max.ranks", 7, "user.max.ranks", 9, "pmi.max.connections.per.job", 5,
                        "pmi.max.connections.per.uid", 6, "pmi.idle.seconds", 11))));
        for (Map.Entry<String, String> bad : Map.of("job.max.ranks", "job.max.ranks=0 must be >= 1",
                "user.max.ranks", "user.max.ranks=0 must be >= 1",
                "pmi.max.connections.per.job", "pmi.max.connections.per.job=0 must be >= 1",
                "pmi.max.connections.per.uid", "pmi.max.connections.per.uid=0 must be >= 1").entrySet()) {
            assertEquals(bad.getValue(), assertThrows(IllegalArgumentException.class, () -> ProxyConfigs.validate(
                    TestConfigs.of(ProxyConfig.class, Map.of(bad.getKey(), 0)))).getMessage());
        }
        assertEquals("pmi.idle.seconds=-1 must be >= 0 (0: never)", assertThrows(IllegalArgumentException.class,
                () -> NodeLimits.of(TestConfigs.of(ProxyConfig.class, Map.of("pmi.idle.seconds", -1)))).getMessage());
    }
}
