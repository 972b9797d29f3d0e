package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.RankChannel;

class CurrentChannelManagerTest {

    private final AtomicReference<ChannelManager> bound = new AtomicReference<>();
    private final CurrentChannelManager channels = new CurrentChannelManager(bound::get);

    /** A fake manager claiming another base directory. */
    private static ChannelManager elsewhere(FakeChannelManager fake, String base) {
        return new ChannelManager() {
            @Override
            public RankChannel open(long jobId, int rankId) throws IOException {
                return fake.open(jobId, rankId);
            }

            @Override
            public void remove(long jobId, int rankId) {
                fake.remove(jobId, rankId);
            }

            @Override
            public void release(long jobId) {
                fake.release(jobId);
            }

            @Override
            public Path jobDirectory(long jobId) {
                return Path.of(base).resolve("job-" + Job.hex(jobId));
            }

            @Override
            public Path baseDirectory() {
                return Path.of(base);
            }
        };
    }

    @Test
    void shouldFailReadablyWhileNoManagerIsBound() {
        IOException e = assertThrows(IOException.class, () -> channels.open(1, 1));
        assertEquals("no channel manager is running", e.getMessage());
    }

    @Test
    void shouldUseTheManagerBoundNowWhenTheBaseDirectoryIsTheSame() throws Exception {
        FakeChannelManager before = new FakeChannelManager();
        FakeChannelManager after = new FakeChannelManager();
        bound.set(before);
        channels.open(5, 1);
        bound.set(after);
        channels.open(5, 2);
        channels.remove(5, 1);
        channels.release(5);
        assertEquals(List.of("0000000000000005/1"), after.removed);
        assertEquals(List.of(5L), after.released);
        assertEquals(List.of(), before.released);
    }

    @Test
    void shouldLeaveARunningJobWithTheManagerThatCreatedItsDirectory() throws Exception {
        FakeChannelManager before = new FakeChannelManager();
        FakeChannelManager after = new FakeChannelManager();
        bound.set(before);
        channels.open(5, 1);
        bound.set(elsewhere(after, "moved"));
        channels.open(5, 2);
        channels.open(6, 1);
        channels.release(5);
        channels.release(6);
        assertEquals(List.of("0000000000000005/1", "0000000000000005/2"), List.copyOf(before.open.keySet()));
        assertEquals(List.of(5L), before.released);
        assertEquals(List.of(6L), after.released);
    }
}
