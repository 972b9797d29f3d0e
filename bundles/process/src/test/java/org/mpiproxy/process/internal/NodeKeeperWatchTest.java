package org.mpiproxy.process.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.process.KeeperFiles;
import org.mpiproxy.process.ProcStat;

/**
 * The keeper's window and grace, with the test as its clock: one look of the watch at a time, the
 * signals it would send recorded instead of sent.
 */
class NodeKeeperWatchTest {

    @TempDir
    Path directory;

    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final List<String> signals = new ArrayList<>();
    private List<ProcStat> orphans = List.of();

    private NodeKeeper keeper() {
        NodeKeeper.LibC libc = (NodeKeeper.LibC) Proxy.newProxyInstance(NodeKeeper.LibC.class.getClassLoader(),
                new Class<?>[] {NodeKeeper.LibC.class}, (proxy, method, args) -> {
                    if (method.getName().equals("kill")) {
                        signals.add(args[0] + " " + args[1]);
                        return 0;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
        return new NodeKeeper(libc, directory, now::get, () -> orphans);
    }

    private void advance(Duration duration) {
        now.addAndGet(duration.toNanos());
    }

    /** @return a running process of that group, a child of the keeper */
    private static ProcStat process(long pid, long pgrp) throws IOException {
        return ProcStat.parse(pid + " (sh) S 1 " + pgrp + " " + pgrp
                + " 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5000 1000 100");
    }

    @Test
    void shouldStopTheOrphansOnceTheWindowHasPassedAndKillThemOnceTheGraceHasToo() throws Exception {
        KeeperFiles.writePolicy(directory, 30, 10);
        // a rank leads its group, which goes whole; anything else goes alone
        orphans = List.of(process(4242, 4242), process(4250, 1));
        NodeKeeper keeper = keeper();

        advance(Duration.ofHours(1));
        keeper.look();
        assertEquals(List.of(), signals, "the command answers for them while it runs");

        keeper.commandEnded(0);
        advance(Duration.ofSeconds(30));
        keeper.look();
        assertEquals(List.of(), signals, "not before the window has passed");
        advance(Duration.ofNanos(1));
        keeper.look();
        assertEquals(List.of("-4242 15", "4250 15"), signals, "SIGTERM once it has");

        signals.clear();
        advance(Duration.ofSeconds(10));
        keeper.look();
        assertEquals(List.of(), signals, "no SIGKILL before the grace has passed");
        advance(Duration.ofNanos(1));
        keeper.look();
        assertEquals(List.of("-4242 9", "4250 9"), signals, "SIGKILL once it has");
    }

    @Test
    void shouldLeaveTheOrphansToARunningOwnerAndCountTheWindowFromWhenItWasLastSeen() throws Exception {
        KeeperFiles.writePolicy(directory, 30, 10);
        long self = ProcessHandle.current().pid();
        long selfStart = ProcStat.read(self).orElseThrow().startTime();
        KeeperFiles.writeOwner(directory, self, selfStart);
        orphans = List.of(process(4242, 4242));
        NodeKeeper keeper = keeper();
        keeper.commandEnded(0);

        advance(Duration.ofHours(1));
        keeper.look();
        assertEquals(List.of(), signals, "a running owner answers for them, however long");

        // the owner named is no longer there (this pid with another start time is another process)
        KeeperFiles.writeOwner(directory, self, selfStart + 1);
        advance(Duration.ofSeconds(30));
        keeper.look();
        assertEquals(List.of(), signals, "the window counts from when the owner was last seen");
        advance(Duration.ofNanos(1));
        keeper.look();
        assertEquals(List.of("-4242 15"), signals);
    }

    @Test
    void shouldStopTheOrphansAtTheFirstLookWithoutAPolicy() throws Exception {
        orphans = List.of(process(4242, 4242));
        NodeKeeper keeper = keeper();
        keeper.commandEnded(0);

        advance(Duration.ofNanos(1));
        keeper.look();
        assertEquals(List.of("-4242 15"), signals, "no policy written keeps nothing");
    }
}
