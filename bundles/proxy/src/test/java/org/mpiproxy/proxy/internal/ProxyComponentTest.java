package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

class ProxyComponentTest {

    @Test
    void shouldUseContractDefaults() {
        ProxySettings s = ProxyComponent.settings(TestConfigs.of(ProxyComponent.Config.class, Map.of()));
        assertEquals(1048576, s.holdLimitBytes());
        assertEquals(Duration.ofSeconds(30), s.terminateTimeout());
        assertEquals(Duration.ofSeconds(10), s.stopGrace());
        assertTrue(s.logDirectory().endsWith(Path.of("mpiproxy", "logs")), s.logDirectory().toString());
    }

    @Test
    void shouldDefaultToAbortOnFailureWithoutTimeoutAndFiveMinutesOfHostSilence() {
        SupervisionSettings s = ProxyComponent.supervision(TestConfigs.of(ProxyComponent.Config.class, Map.of()));
        assertTrue(s.abortOnFailure());
        assertEquals(Duration.ZERO, s.jobTimeout());
        assertEquals(Duration.ofSeconds(300), s.hostSilence());
        s = ProxyComponent.supervision(TestConfigs.of(ProxyComponent.Config.class,
                Map.of("abort.on.failure", false, "job.timeout.seconds", 60, "host.silence.seconds", 0)));
        assertEquals(new SupervisionSettings(false, Duration.ofSeconds(60), Duration.ZERO), s);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ProxyComponent.supervision(
                TestConfigs.of(ProxyComponent.Config.class, Map.of("job.timeout.seconds", -2))));
        assertTrue(e.getMessage().contains("job.timeout.seconds=-2"), e.getMessage());
    }

    @Test
    void shouldUseConfiguredLogDirectory() {
        ProxySettings s = ProxyComponent.settings(TestConfigs.of(ProxyComponent.Config.class,
                Map.of("log.directory", "some/dir")));
        assertEquals(Path.of("some/dir"), s.logDirectory());
    }

    @Test
    void shouldRejectNegativeValuesNamingKeyAndValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ProxyComponent.settings(
                TestConfigs.of(ProxyComponent.Config.class, Map.of("hold.limit.bytes", -1L))));
        assertTrue(e.getMessage().contains("hold.limit.bytes=-1"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> ProxyComponent.settings(
                TestConfigs.of(ProxyComponent.Config.class, Map.of("terminate.timeout.seconds", -5))));
        assertTrue(e.getMessage().contains("terminate.timeout.seconds=-5"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> ProxyComponent.settings(
                TestConfigs.of(ProxyComponent.Config.class, Map.of("stop.grace.seconds", -1))));
        assertTrue(e.getMessage().contains("stop.grace.seconds=-1"), e.getMessage());
    }

    @Test
    void shouldServeThroughComponentAndStopOnDeactivate() {
        FakeChannelManager channels = new FakeChannelManager();
        ProxyComponent component = new ProxyComponent(channels, TestConfigs.of(ProxyComponent.Config.class,
                Map.of()));
        RecordingTransport transport = new RecordingTransport();
        component.onDatagram(V1Datagrams.exec(1, 0, 2, "prog"), new java.net.InetSocketAddress("127.0.0.1", 1),
                transport);
        assertEquals(1, transport.take().size(), "no launcher bound: MPI_ERR_IO at once");
        assertEquals(0, component.doWork(transport));
        assertEquals(1L, component.counters().get("exec.rejected"));
        assertTrue(component.jobs().isEmpty());
        component.deactivate();
    }
}
