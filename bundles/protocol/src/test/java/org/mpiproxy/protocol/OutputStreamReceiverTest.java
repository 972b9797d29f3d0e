package org.mpiproxy.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

class OutputStreamReceiverTest {

    private final List<String> got = new ArrayList<>();
    private final OutputStreamReceiver.Lines lines = new OutputStreamReceiver.Lines() {
        @Override
        public void onLine(String line, boolean partial) {
            got.add(partial ? line + " (partial)" : line);
        }

        @Override
        public void onDropped(long count) {
            got.add("dropped " + count);
        }
    };

    private static byte[] b(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void shouldJoinTheFragmentsOfALineAndHandOnWholeLinesInOrder() {
        OutputStreamReceiver r = new OutputStreamReceiver(lines, 0);
        r.onFragment(0, b("hel"), false, false, 0);
        r.onFragment(1, b("lo"), true, false, 0);
        r.onFragment(2, b("last"), true, true, 0);
        assertEquals(List.of("hello", "last (partial)"), got);
        assertEquals(3, r.next());
    }

    @Test
    void shouldKeepFragmentsAfterAGapUntilTheMissingOneComesAndIgnoreDuplicates() {
        OutputStreamReceiver r = new OutputStreamReceiver(lines, 0);
        r.onFragment(0, b("a"), true, false, 0);
        r.onFragment(2, b("c"), true, false, 0);
        r.onFragment(3, b("d"), true, false, 0);
        assertEquals(List.of("a"), got);
        assertEquals(1, r.next(), "acknowledges only what came in order");
        r.onFragment(0, b("a again"), true, false, 0);
        r.onFragment(1, b("b"), true, false, 0);
        assertEquals(List.of("a", "b", "c", "d"), got);
        assertEquals(4, r.next());
    }

    @Test
    void shouldTellTheLinesTheProxyDroppedOnceEachBeforeTheNextLine() {
        OutputStreamReceiver r = new OutputStreamReceiver(lines, 0);
        r.onFragment(0, b("x"), true, false, 0);
        r.onFragment(1, b("y"), true, false, 120);
        r.onFragment(2, b("z"), true, false, 120);
        r.onFragment(3, b("w"), true, false, 125);
        assertEquals(List.of("x", "dropped 120", "y", "z", "dropped 5", "w"), got);
    }

    @Test
    void shouldStartAtTheFirstFragmentWhenTheBeginningWasAcknowledgedByAnother() {
        OutputStreamReceiver r = new OutputStreamReceiver(lines, -1);
        assertEquals(0, r.next());
        r.onFragment(41, b("late"), true, false, 0);
        r.onFragment(42, b("later"), true, false, 0);
        assertEquals(List.of("late", "later"), got);
        assertEquals(43, r.next());
    }

    @Test
    void shouldKeepAtMostTheEarlyLimitAfterAGap() {
        OutputStreamReceiver r = new OutputStreamReceiver(lines, 0);
        for (int i = 1; i <= OutputStreamReceiver.EARLY_MAX + 10; i++) {
            r.onFragment(i, b("l" + i), true, false, 0);
        }
        r.onFragment(0, b("l0"), true, false, 0);
        assertEquals(OutputStreamReceiver.EARLY_MAX + 1, got.size(), "the first and those kept");
        assertEquals(OutputStreamReceiver.EARLY_MAX + 1, r.next(), "the rest comes again from the proxy");
    }
}
