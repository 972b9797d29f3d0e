package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledThreadPoolExecutor;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.protocol.ExecCommand;
import org.mpiproxy.protocol.ExecEnvironment;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.pmi.PmiLimits;

/**
 * A job's common environment through the v2 dispatcher (docs/protocol-v2.md 5.10): sent once in
 * fragments, merged into the launches of the EXECs that name it, refused when missing or too large.
 */
class V2JobEnvironmentsTest {

    static final InetSocketAddress HOST = new InetSocketAddress("127.0.0.1", 40001);
    static final long JOB = 0x6e76L;
    static final long NOW = 1_767_225_600_000L;
    static final int CHUNK = 1312;

    private final FakeChannelManager channels = new FakeChannelManager();
    private final FakeLauncher launcher = new FakeLauncher();
    private final RecordingTransport transport = new RecordingTransport();
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final V2Datagrams host = new V2Datagrams(NOW);
    private final V2Authenticator verifier = V2Datagrams.hostVerifier();
    private V2Dispatcher dispatcher;

    private void start(long environmentMaxBytes) {
        V2Settings v2 = new V2Settings(V2Datagrams.KEYS, V2Datagrams.NODE, Duration.ofSeconds(30), 1024, 1448,
                Duration.ofSeconds(300), V2Settings.DEFAULT_MAX_MESSAGE_BYTES, StagedPrograms.MAX_FILE_BYTES, 1024,
                V2Settings.DEFAULT_CREDENTIALS_MAX, false, new NodeLimits(NodeLimits.DEFAULT_JOB_MAX_RANKS,
                NodeLimits.DEFAULT_USER_MAX_RANKS, PmiLimits.DEFAULT, environmentMaxBytes));
        dispatcher = new V2Dispatcher(channels,
                new ProxySettings(Path.of("logs"), 1 << 20, Duration.ofSeconds(30), Duration.ofSeconds(1)), v2,
                coreId -> launcher, transport::wakeup, Runnable::run, timer, () -> NOW);
    }

    @AfterEach
    void tearDown() {
        if (dispatcher != null) {
            dispatcher.close();
        }
        timer.shutdownNow();
    }

    /** @return the one reply to a datagram, verified as a host does */
    private V2HeaderFlyweight deliver(ByteBuffer datagram) {
        dispatcher.onDatagram(datagram, HOST, transport);
        dispatcher.doWork(transport);
        List<RecordingTransport.Sent> sent = transport.take();
        assertEquals(1, sent.size(), "one reply");
        assertEquals(HOST, sent.get(0).target);
        assertEquals(V2Authenticator.OK, verifier.verifyReply(sent.get(0).bytes, 0, sent.get(0).bytes.limit(), NOW));
        return new V2HeaderFlyweight().wrap(sent.get(0).bytes, 0);
    }

    private static String text(V2HeaderFlyweight h) {
        byte[] b = new byte[h.payloadLength()];
        h.buffer().get(V2HeaderDescriptor.HEADER_LENGTH, b);
        return new String(b, StandardCharsets.UTF_8);
    }

    /** About 5 KiB: 80 variables of 64 bytes each. */
    private static Map<String, String> fiveKiB() {
        Map<String, String> variables = new LinkedHashMap<>();
        for (int i = 0; i < 80; i++) {
            variables.put(String.format("VAR_%03d", i), "v".repeat(55) + i % 10);
        }
        return variables;
    }

    /** Sends the environment whole, fragments out of order and one twice; @return the last reply */
    private V2HeaderFlyweight sendAll(byte[] content) {
        int count = (content.length + CHUNK - 1) / CHUNK;
        V2HeaderFlyweight last = null;
        for (int i = count - 1; i >= 0; i--) {
            last = deliver(host.environment(JOB, content, CHUNK, i));
            assertEquals(MpiErrors.SUCCESS, last.result());
            assertEquals(i, last.sequence());
            assertEquals(i == 0 ? 1 : 0, last.argument(), "complete with its last fragment only");
        }
        return last;
    }

    @Test
    void shouldMergeAFiveKibEnvironmentIntoTheLaunchOfEveryRankThatNamesIt() {
        start(V2JobEnvironments.DEFAULT_MAX_BYTES);
        Map<String, String> common = fiveKiB();
        byte[] content = ExecEnvironment.encode(common);
        assertTrue(content.length >= 5 * 1024, content.length + " bytes");
        byte[] digest = ExecEnvironment.digest(content);

        V2HeaderFlyweight probe = deliver(host.environment(JOB, content, CHUNK, -1));
        assertEquals(V2HeaderDescriptor.OP_ENVIRONMENT, probe.operation());
        assertEquals(MpiErrors.SUCCESS, probe.result());
        assertEquals(0, probe.argument(), "not here yet");
        sendAll(content);
        assertEquals(1, deliver(host.environment(JOB, content, CHUNK, 2)).argument(), "a repeated fragment: held");
        assertEquals(1, deliver(host.environment(JOB, content, CHUNK, -1)).argument(), "the probe: held");

        for (int r = 1; r <= 2; r++) {
            Map<String, String> own = new LinkedHashMap<>();
            own.put("MPIPROXY_LOCAL_RANK", String.valueOf(r - 1));
            own.put("VAR_003", "rank " + r);
            V2HeaderFlyweight reply = deliver(host.execNaming(JOB, r, 3, digest, new ExecCommand("prog", List.of("a"),
                    own)));
            assertEquals(MpiErrors.SUCCESS, reply.result(), text(reply));
        }
        assertEquals(2, launcher.requests.size());
        for (int r = 1; r <= 2; r++) {
            LaunchRequest launch = launcher.requests.get(r - 1);
            assertEquals("prog", launch.program());
            assertEquals(List.of("a"), launch.args());
            Map<String, String> env = launch.environment();
            for (Map.Entry<String, String> e : common.entrySet()) {
                if (!e.getKey().equals("VAR_003")) {
                    assertEquals(e.getValue(), env.get(e.getKey()), e.getKey());
                }
            }
            assertEquals("rank " + r, env.get("VAR_003"), "the rank's own variable wins");
            assertEquals(String.valueOf(r - 1), env.get("MPIPROXY_LOCAL_RANK"));
        }
    }

    @Test
    void shouldRefuseAnExecNamingAnEnvironmentTheNodeDoesNotHoldUntilItIsSent() {
        start(V2JobEnvironments.DEFAULT_MAX_BYTES);
        byte[] content = ExecEnvironment.encode(fiveKiB());
        byte[] digest = ExecEnvironment.digest(content);
        ExecCommand command = new ExecCommand("prog", List.of(), Map.of("MPIPROXY_LOCAL_RANK", "0"));

        V2HeaderFlyweight refused = deliver(host.execNaming(JOB, 1, 2, digest, command));
        assertEquals(MpiErrors.ERR_NO_ENVIRONMENT, refused.result());
        assertEquals("job " + Job.hex(JOB) + ": no environment "
                + java.util.HexFormat.of().formatHex(digest).substring(0, 16)
                + "... on this node; send it again (ENVIRONMENT)", text(refused));
        assertEquals(0, launcher.requests.size(), "nothing started");

        sendAll(content);
        V2HeaderFlyweight started = deliver(host.execNaming(JOB, 1, 2, digest, command));
        assertEquals(MpiErrors.SUCCESS, started.result(), "the refusal was not remembered");
        assertEquals(1, launcher.requests.size());
        Map<String, String> env = launcher.requests.get(0).environment();
        assertEquals(80, env.keySet().stream().filter(k -> k.startsWith("VAR_")).count());
        assertEquals("0", env.get("MPIPROXY_LOCAL_RANK"));
    }

    @Test
    void shouldRefuseAnEnvironmentAboveTheJobsBoundWithOneLine() {
        start(4096);
        byte[] content = ExecEnvironment.encode(fiveKiB());
        V2HeaderFlyweight probe = deliver(host.environment(JOB, content, CHUNK, -1));
        assertEquals(MpiErrors.ERR_MESSAGE_TOO_LARGE, probe.result());
        assertEquals(4096, probe.argument(), "the most the job may send");
        assertEquals("job " + Job.hex(JOB) + ": an environment of " + content.length
                + " bytes is more than exec.environment.max.bytes=4096", text(probe));
        V2HeaderFlyweight fragment = deliver(host.environment(JOB, content, CHUNK, 0));
        assertEquals(MpiErrors.ERR_MESSAGE_TOO_LARGE, fragment.result(), "nothing of it is kept");
    }

    @Test
    void shouldDropAnEnvironmentWhenItsJobEndsAndWhenIdle() {
        V2JobEnvironments environments = new V2JobEnvironments(() -> V2JobEnvironments.DEFAULT_MAX_BYTES);
        byte[] content = ExecEnvironment.encode(Map.of("A", "1"));
        byte[] digest = ExecEnvironment.digest(content);
        long t0 = 5_000_000_000L;
        ByteBuffer fragment = host.environment(JOB, content, CHUNK, 0);
        V2HeaderFlyweight f = new V2HeaderFlyweight().wrap(fragment, 0);
        assertTrue(environments.onFragment(JOB, f.argument(), f.sequence(), f.ack(), f.tag(), f.buffer(),
                f.payloadOffset(), f.payloadLength(), t0).complete());
        V2HeaderFlyweight exec = new V2HeaderFlyweight().wrap(host.execNaming(JOB, 1, 2, digest,
                new ExecCommand("prog", List.of(), Map.of("B", "2"))), 0);
        assertEquals(Map.of("A", "1", "B", "2"), environments.command(exec, true, t0).environment());
        // used at t0 + 30 s: kept 60 s after that, dropped after
        assertEquals(Map.of("A", "1", "B", "2"),
                environments.command(exec, true, t0 + V2JobEnvironments.IDLE_NANOS / 2).environment());
        V2JobEnvironments.Refused idle = assertThrows(V2JobEnvironments.Refused.class,
                () -> environments.command(exec, true, t0 + V2JobEnvironments.IDLE_NANOS * 3 / 2 + 1));
        assertEquals(MpiErrors.ERR_NO_ENVIRONMENT, idle.result);
        assertEquals(0, environments.size());

        assertTrue(environments.onFragment(JOB, f.argument(), f.sequence(), f.ack(), f.tag(), f.buffer(),
                f.payloadOffset(), f.payloadLength(), t0).complete());
        environments.forget(JOB);
        assertEquals(0, environments.size());
        assertThrows(V2JobEnvironments.Refused.class, () -> environments.command(exec, true, t0));
        // the flag without PLAIN is malformed, not missing
        V2JobEnvironments.Refused notPlain = assertThrows(V2JobEnvironments.Refused.class,
                () -> environments.command(exec, false, t0));
        assertEquals(MpiErrors.ERR_ARG, notPlain.result);
        assertFalse(notPlain.getMessage().contains("\n"));
    }
}
