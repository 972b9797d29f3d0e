package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ScheduledThreadPoolExecutor;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.api.RankIdentity;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.JobCredential;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.NodeIds;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.V2RefusalDescriptor;

/**
 * Users of v2 (docs/protocol-v2.md 4.1, 5.9): a host that holds only a job key presents its job
 * credential, starts ranks that run as the credential's user and hears replies signed with its job
 * key; what a node refuses (another user, uid 0, expired, unknown job key, too many credentials),
 * and that a job's user outlives a hand-over and a restart.
 */
class V2CredentialTest {

    private static final InetSocketAddress HOST = new InetSocketAddress("127.0.0.1", 40001);
    private static final long JOB = 0x4242L;
    private static final long NOW = 1_767_225_600_000L;
    private static final long HOUR = 3_600_000;
    private static final long NODE = NodeIds.of(V2Datagrams.NODE);

    private final FakeChannelManager channels = new FakeChannelManager();
    private final FakeLauncher launcher = new FakeLauncher();
    private final RecordingTransport transport = new RecordingTransport();
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final List<V2Dispatcher> dispatchers = new ArrayList<>();
    private long now = NOW;
    /** Hosts of one test draw their nonces from apart: requests of key id 0 share one replay cache. */
    private long nonces;

    @AfterEach
    void tearDown() {
        dispatchers.forEach(V2Dispatcher::close);
        timer.shutdownNow();
    }

    private V2Dispatcher proxy(int credentialsMax, boolean rootAllowed) {
        V2Dispatcher d = new V2Dispatcher(channels,
                new ProxySettings(Path.of("logs"), 1 << 20, Duration.ofSeconds(30), Duration.ofSeconds(1)),
                new V2Settings(V2Datagrams.KEYS, V2Datagrams.NODE, Duration.ofSeconds(30), 1024, 1448,
                        Duration.ofSeconds(300), V2Settings.DEFAULT_MAX_MESSAGE_BYTES, StagedPrograms.MAX_FILE_BYTES,
                        1024, credentialsMax, rootAllowed),
                coreId -> launcher, transport::wakeup, Runnable::run, timer, () -> now);
        d.refusalClock(() -> now * 1_000_000);
        dispatchers.add(d);
        return d;
    }

    private V2Dispatcher proxy() {
        return proxy(V2Settings.DEFAULT_CREDENTIALS_MAX, false);
    }

    private static JobCredential credential(long jobId, long uid, long expires) {
        return new JobCredential(1, uid, uid, jobId, Math.min(NOW - 1000, expires), expires, NODE, 77);
    }

    /** A user's host: it holds the job key of its credential, nothing else. */
    private final class User {
        final JobCredential credential;
        final V2Datagrams host;
        final V2Authenticator verifier;

        User(JobCredential credential) {
            this.credential = credential;
            ClusterKeys jobKey = ClusterKeys.ofJobKey(credential.jobKey(V2Datagrams.KEYS));
            this.host = new V2Datagrams(jobKey, V2Datagrams.NODE, NOW);
            this.host.keyId = JobCredential.JOB_KEY_ID;
            this.host.nonce.set(nonces += 1_000_000);
            this.verifier = new V2Authenticator(jobKey, NODE, 30_000, 16);
        }

        ByteBuffer present() {
            host.now = now;
            return host.credential(credential.jobId(), credential.encode(V2Datagrams.KEYS));
        }

        ByteBuffer exec(int rank) {
            host.now = now;
            return host.exec(credential.jobId(), rank, 0, 8, "prog");
        }

        /** The one reply since the last call, verified with this user's job key. */
        V2HeaderFlyweight reply() {
            List<RecordingTransport.Sent> sent = transport.take();
            assertEquals(1, sent.size(), "replies");
            ByteBuffer b = sent.get(0).bytes;
            assertEquals(HOST, sent.get(0).target);
            assertEquals(V2Authenticator.OK, verifier.verifyReply(b, 0, b.limit(), now), "signed with the job key");
            V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(b, 0);
            assertEquals(JobCredential.JOB_KEY_ID, h.keyId());
            return h;
        }
    }

    private void deliver(V2Dispatcher proxy, ByteBuffer datagram) {
        proxy.onDatagram(datagram, HOST, transport);
        proxy.doWork(transport);
    }

    private static String reason(V2HeaderFlyweight reply) {
        byte[] text = new byte[reply.payloadLength()];
        reply.buffer().get(reply.payloadOffset(), text);
        return new String(text, StandardCharsets.UTF_8);
    }

    /** The one refusal (3.5) since the last call. */
    private int refusal() {
        List<RecordingTransport.Sent> sent = transport.take();
        assertEquals(1, sent.size(), "refusals");
        ByteBuffer b = sent.get(0).bytes;
        assertTrue(V2RefusalDescriptor.isRefusal(b, 0, b.limit()));
        return V2RefusalDescriptor.reason(b, 0);
    }

    @Test
    void shouldRunTheJobOfAJobKeyAsTheCredentialsUser() {
        V2Dispatcher proxy = proxy();
        User user = new User(credential(JOB, 1000, NOW + HOUR));
        deliver(proxy, user.present());
        V2HeaderFlyweight accepted = user.reply();
        assertEquals(V2HeaderDescriptor.OP_CREDENTIAL, accepted.operation());
        assertEquals(MpiErrors.SUCCESS, accepted.result());
        assertEquals(JOB, accepted.jobId());
        assertEquals(0, accepted.rank());
        assertEquals(0, accepted.payloadLength());

        deliver(proxy, user.exec(1));
        assertEquals(MpiErrors.SUCCESS, user.reply().result());
        deliver(proxy, user.exec(2));
        assertEquals(MpiErrors.SUCCESS, user.reply().result());
        assertEquals(List.of(new RankIdentity(1000, 1000), new RankIdentity(1000, 1000)),
                launcher.requests.stream().map(r -> r.user()).toList());
        deliver(proxy, user.host.status(JOB, 1, 0));
        assertEquals(MpiErrors.SUCCESS, user.reply().result());

        // a job of a cluster key runs as before: no user
        V2Datagrams operator = new V2Datagrams(now);
        deliver(proxy, operator.exec(JOB + 1, 1, 0, 2, "prog"));
        transport.take();
        assertNull(launcher.requests.get(2).user());
        assertEquals(1, proxy.counter(V2Counter.CREDENTIAL_REQUESTS));
    }

    @Test
    void shouldRefuseARequestOfAnUnknownJobKeyWithNoCredentialUntilTheCredentialIsPresented() {
        V2Dispatcher proxy = proxy();
        User user = new User(credential(JOB, 1000, NOW + HOUR));
        deliver(proxy, user.exec(1));
        assertEquals(V2RefusalDescriptor.REASON_NO_CREDENTIAL, refusal());
        assertEquals(1, proxy.counter(V2Counter.AUTH_NO_CREDENTIAL));
        assertEquals(0, launcher.requests.size());
        assertEquals(Long.valueOf(1), proxy.counters().get("v2.auth.no.credential"));

        deliver(proxy, user.present());
        assertEquals(MpiErrors.SUCCESS, user.reply().result());
        deliver(proxy, user.exec(1));
        assertEquals(MpiErrors.SUCCESS, user.reply().result());
    }

    @Test
    void shouldRefuseAnotherUsersCredentialForTheJobAndAnyForAJobOfAClusterKey() {
        V2Dispatcher proxy = proxy();
        User first = new User(credential(JOB, 1000, NOW + HOUR));
        deliver(proxy, first.present());
        first.reply();
        deliver(proxy, first.exec(1));
        first.reply();

        User other = new User(credential(JOB, 1001, NOW + HOUR));
        deliver(proxy, other.present());
        V2HeaderFlyweight refused = other.reply();
        assertEquals(MpiErrors.ERR_PERMISSION, refused.result());
        assertEquals("job 0000000000004242 is another user's", reason(refused));
        deliver(proxy, other.exec(2));
        assertEquals(V2RefusalDescriptor.REASON_NOT_VERIFIED, refusal(), "its key is not the job's");

        V2Datagrams operator = new V2Datagrams(now);
        deliver(proxy, operator.exec(JOB + 1, 1, 0, 2, "prog"));
        transport.take();
        User late = new User(credential(JOB + 1, 1000, NOW + HOUR));
        deliver(proxy, late.present());
        assertEquals(MpiErrors.ERR_PERMISSION, late.reply().result());
        assertEquals(2, proxy.counter(V2Counter.CREDENTIAL_REFUSED));
        assertEquals(2, launcher.requests.size());
    }

    @Test
    void shouldRefuseAPendingJobToASecondUser() {
        V2Dispatcher proxy = proxy();
        deliver(proxy, new User(credential(JOB, 1000, NOW + HOUR)).present());
        transport.take();
        User other = new User(credential(JOB, 1001, NOW + HOUR));
        deliver(proxy, other.present());
        assertEquals(MpiErrors.ERR_PERMISSION, other.reply().result());
    }

    @Test
    void shouldRefuseRootUnlessRanksMayRunAsRoot() {
        User root = new User(credential(JOB, 0, NOW + HOUR));
        V2Dispatcher strict = proxy();
        deliver(strict, root.present());
        V2HeaderFlyweight refused = root.reply();
        assertEquals(MpiErrors.ERR_PERMISSION, refused.result());
        assertTrue(reason(refused).contains("rank.root.allowed"), reason(refused));

        V2Dispatcher lenient = proxy(V2Settings.DEFAULT_CREDENTIALS_MAX, true);
        deliver(lenient, root.present());
        assertEquals(MpiErrors.SUCCESS, root.reply().result());
        deliver(lenient, root.exec(1));
        assertEquals(MpiErrors.SUCCESS, root.reply().result());
        assertEquals(new RankIdentity(0, 0), launcher.requests.get(0).user());
    }

    @Test
    void shouldRefuseAnExpiredCredentialUnlessTheNodeHasTheJobWithThatUser() {
        V2Dispatcher proxy = proxy();
        User expired = new User(credential(JOB + 1, 1000, NOW - 30_001));
        deliver(proxy, expired.present());
        V2HeaderFlyweight refused = expired.reply();
        assertEquals(MpiErrors.ERR_EXPIRED, refused.result());
        assertTrue(reason(refused).startsWith("credential expired"), reason(refused));

        User user = new User(credential(JOB, 1000, NOW + HOUR));
        deliver(proxy, user.present());
        user.reply();
        deliver(proxy, user.exec(1));
        user.reply();
        now += 2 * HOUR;
        deliver(proxy, user.present());
        assertEquals(MpiErrors.SUCCESS, user.reply().result(), "the node has the job with that user");
        deliver(proxy, user.exec(2));
        assertEquals(MpiErrors.SUCCESS, user.reply().result(), "a kept job's key does not expire");
    }

    @Test
    void shouldRefuseACredentialThatDoesNotVerify() {
        V2Dispatcher proxy = proxy();
        ClusterKeys otherCluster = ClusterKeys.of(Map.of(1, new byte[32]), 1);
        JobCredential forged = credential(JOB, 1000, NOW + HOUR);
        V2Datagrams host = new V2Datagrams(ClusterKeys.ofJobKey(forged.jobKey(otherCluster)), V2Datagrams.NODE, NOW);
        host.keyId = JobCredential.JOB_KEY_ID;
        deliver(proxy, host.credential(JOB, forged.encode(otherCluster)));
        assertEquals(V2RefusalDescriptor.REASON_NOT_VERIFIED, refusal());
        assertEquals(1, proxy.counter(V2Counter.AUTH_BAD_CREDENTIAL));
        assertEquals(Long.valueOf(1), proxy.counters().get("v2.auth.bad.credential"));
        assertEquals(0, proxy.counter(V2Counter.CREDENTIAL_REQUESTS));
    }

    @Test
    void shouldKeepAtMostTheConfiguredKeysOfJobsTheNodeDoesNotHave() {
        V2Dispatcher proxy = proxy(1, false);
        User first = new User(credential(JOB, 1000, NOW + HOUR));
        deliver(proxy, first.present());
        assertEquals(MpiErrors.SUCCESS, first.reply().result());
        User second = new User(credential(JOB + 1, 1000, NOW + HOUR));
        deliver(proxy, second.present());
        assertEquals(V2RefusalDescriptor.REASON_BUSY, refusal());
        assertEquals(1, proxy.counter(V2Counter.CREDENTIAL_TABLE_FULL));
        deliver(proxy, first.exec(1));
        first.reply();
        deliver(proxy, second.present());
        assertEquals(MpiErrors.SUCCESS, second.reply().result(), "a job the node has no longer counts");
    }

    @Test
    void shouldKeepTheJobsUserAcrossAHandOverAndARestart() throws Exception {
        V2Dispatcher old = proxy();
        User user = new User(credential(JOB, 1000, NOW + HOUR));
        deliver(old, user.present());
        user.reply();
        deliver(old, user.exec(1));
        user.reply();
        Map<String, Object> state = old.handOver();

        // a hand-over within the JVM: the authenticator, with the job's key, goes on
        V2Dispatcher next = proxy();
        next.adoptOutput(state);
        next.adopt(state);
        deliver(next, user.exec(2));
        assertEquals(MpiErrors.SUCCESS, user.reply().result());
        assertEquals(new RankIdentity(1000, 1000), launcher.requests.get(1).user());

        // a restart: the job keys do not outlive the JVM, the job's user does
        Map<String, Object> restarted = next.handOver();
        restarted.remove("authenticator");
        V2Dispatcher after = proxy();
        after.adoptOutput(restarted);
        after.adopt(restarted);
        now += 2 * HOUR;
        deliver(after, user.exec(3));
        assertEquals(V2RefusalDescriptor.REASON_NO_CREDENTIAL, refusal());
        deliver(after, user.present());
        assertEquals(MpiErrors.SUCCESS, user.reply().result(), "presented again, past its expiry");
        deliver(after, user.exec(3));
        assertEquals(MpiErrors.SUCCESS, user.reply().result());
        assertEquals(new RankIdentity(1000, 1000), launcher.requests.get(2).user());
    }

    @Test
    void shouldWriteAndReadTheJobsUserInTheStateFile() throws Exception {
        V2Job job = new V2Job(JOB, HOST, 0, 0, Instant.ofEpochMilli(NOW), Path.of("logs"), new RankIdentity(1000, 100));
        V2Job operators = new V2Job(JOB + 1, HOST, 0, 1, Instant.ofEpochMilli(NOW), Path.of("logs"));
        assertEquals(new RankIdentity(1000, 100), V2HandOver.restore(throughStateFile(V2HandOver.export(job)), channels,
                1448).user);
        assertNull(V2HandOver.restore(throughStateFile(V2HandOver.export(operators)), channels, 1448).user);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> throughStateFile(Map<String, Object> exported) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        StateCodec codec = new StateCodec();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            codec.write(out, exported, "job");
        }
        assertEquals(java.util.Set.of(), codec.dropped());
        return (Map<String, Object>) new StateCodec().read(new DataInputStream(new ByteArrayInputStream(
                bytes.toByteArray())));
    }

    @Test
    void shouldForgetAJobsKeyWithTheJob() {
        V2Settings settings = new V2Settings(V2Datagrams.KEYS, V2Datagrams.NODE, Duration.ofSeconds(30), 64, 1448,
                Duration.ofSeconds(300));
        ProxyCounters<V2Counter> counters = new ProxyCounters<>(V2Counter.class);
        V2Replies replies = new V2Replies(settings, () -> now, new SplittableRandom(1), counters);
        LongMap<V2Job> jobs = new LongMap<>();
        V2Credentials credentials = new V2Credentials(org.slf4j.LoggerFactory.getLogger(V2CredentialTest.class), jobs,
                replies, () -> settings, () -> now, counters, new RateLimitedLog<>(V2Counter.class, 1));
        V2Authenticator authenticator = replies.authenticator();
        authenticator.acceptCredential(credential(JOB, 1000, NOW + HOUR), now);
        authenticator.acceptCredential(credential(JOB + 1, 1000, NOW + 1000), now);
        V2Job job = new V2Job(JOB, HOST, 0, 0, Instant.ofEpochMilli(NOW), Path.of("logs"),
                new RankIdentity(1000, 1000));
        jobs.put(JOB, job);
        credentials.created(job);
        job.emptySince = 5;

        now += HOUR;
        credentials.purge(5 + 299_000_000_000L, Duration.ofSeconds(300).toNanos());
        assertTrue(authenticator.knowsJob(JOB, now), "kept while the job lingers, past the credential's expiry");
        assertFalse(authenticator.knowsJob(JOB + 1, now), "a job the node never had: its credential expired");
        assertEquals(1, authenticator.jobKeyCount());
        credentials.purge(5 + 300_000_000_000L, Duration.ofSeconds(300).toNanos());
        assertNull(jobs.get(JOB));
        assertFalse(authenticator.knowsJob(JOB, now));
        assertEquals(0, authenticator.jobKeyCount());
    }
}
