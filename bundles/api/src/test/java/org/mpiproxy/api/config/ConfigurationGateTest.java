package org.mpiproxy.api.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

class ConfigurationGateTest {

    @interface Config {
        int stop_grace_seconds() default 10;

        boolean abort_on_failure() default true;
    }

    private static Config validate(Config c) {
        if (c.stop_grace_seconds() < 0) {
            throw new IllegalArgumentException("stop.grace.seconds=" + c.stop_grace_seconds() + " must be >= 0");
        }
        return c;
    }

    private final ConfigurationGate<Config> gate = new ConfigurationGate<>("org.example", Config.class,
            ConfigurationGateTest::validate);
    private final List<String> lines = new ArrayList<>();
    private final AtomicInteger enabled = new AtomicInteger();

    private boolean offer(Map<String, ?> properties) {
        return gate.offer(properties, lines::add, enabled::incrementAndGet);
    }

    @Test
    void shouldEnableAtOnceWhenTheFirstConfigurationIsGood() {
        assertTrue(offer(Map.of()));
        assertEquals(1, enabled.get());
        assertEquals(List.of(), lines);
        assertTrue(gate.isOpen());
    }

    @Test
    void shouldHoldTheComponentBackWithOneLinePerBadValueAndEnableItOnceFixed() {
        assertFalse(offer(Map.of("stop.grace.seconds", "ten")));
        assertFalse(offer(Map.of("stop.grace.seconds", "ten")));
        assertFalse(offer(Map.of("stop.grace.seconds", "-1")));
        assertFalse(offer(Map.of("stop.grace.seconds", "2", "abort.on.failure", "yes")));
        assertEquals(0, enabled.get(), "not enabled while no value was good");
        assertEquals(List.of(
                "org.example: stop.grace.seconds=ten is not a whole number; no good configuration yet: not started until"
                        + " the value is fixed",
                "org.example: stop.grace.seconds=-1 must be >= 0; no good configuration yet: not started until the value"
                        + " is fixed",
                "org.example: abort.on.failure=yes is not true or false; no good configuration yet: not started until"
                        + " the value is fixed"), lines, "one line per distinct problem, none repeated");

        assertTrue(offer(Map.of("stop.grace.seconds", "2")));
        assertEquals(1, enabled.get());
    }

    @Test
    void shouldLeaveLaterValuesToTheComponentOnceOpen() {
        assertTrue(offer(Map.of("stop.grace.seconds", "2")));
        assertTrue(offer(Map.of("stop.grace.seconds", "ten")));
        assertTrue(offer(Map.of("stop.grace.seconds", "3")));
        assertEquals(1, enabled.get(), "enabled once");
        assertEquals(List.of(), lines, "the component reports later bad values itself, keeping its last good one");
    }

    @Test
    void shouldEnableAChangedGoodConfigurationOnlyAfterTheHandOverToTheOtherComponents() throws Exception {
        assertFalse(offer(Map.of("stop.grace.seconds", "ten")));
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        long start = System.nanoTime();
        long[] at = new long[1];
        assertTrue(gate.offerChange(Map.of("stop.grace.seconds", "2"), lines::add, () -> {
            at[0] = System.nanoTime();
            enabled.incrementAndGet();
            done.countDown();
        }));
        assertEquals(0, enabled.get(), "not from within the hand-over");
        assertTrue(done.await(10, java.util.concurrent.TimeUnit.SECONDS));
        assertTrue(at[0] - start >= ConfigurationGate.AFTER_CHANGE.toNanos(), "enabled after the delay");
        assertTrue(gate.offerChange(Map.of("stop.grace.seconds", "3"), lines::add, enabled::incrementAndGet));
        Thread.sleep(ConfigurationGate.AFTER_CHANGE.toMillis() * 2);
        assertEquals(1, enabled.get(), "enabled once");
    }
}
