package org.mpiproxy.proxy.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

import org.mpiproxy.api.LaunchException;
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.api.RankProcess;

/** Records launch requests and hands out processes that exit when the test says so. */
final class FakeLauncher implements ProcessLauncher {

    static final class FakeProcess implements RankProcess {
        final long pid;
        final int coreId;
        final CompletableFuture<Integer> exit = new CompletableFuture<>();
        final List<Duration> stops = new CopyOnWriteArrayList<>();

        FakeProcess(long pid, int coreId) {
            this.pid = pid;
            this.coreId = coreId;
        }

        @Override
        public long pid() {
            return pid;
        }

        @Override
        public int coreId() {
            return coreId;
        }

        @Override
        public boolean isAlive() {
            return !exit.isDone();
        }

        @Override
        public CompletableFuture<Integer> onExit() {
            return exit;
        }

        @Override
        public void stop(Duration grace) {
            stops.add(grace);
        }

        void exitWith(int status) {
            exit.complete(status);
        }
    }

    final List<LaunchRequest> requests = new ArrayList<>();
    final List<FakeProcess> processes = new ArrayList<>();
    String failWith;
    private long nextPid = 1000;

    @Override
    public RankProcess launch(LaunchRequest request) throws LaunchException {
        requests.add(request);
        if (failWith != null) {
            throw new LaunchException(failWith);
        }
        FakeProcess p = new FakeProcess(nextPid++, request.coreId());
        processes.add(p);
        return p;
    }

    FakeProcess last() {
        return processes.get(processes.size() - 1);
    }
}
