package org.mpiproxy.process;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

import com.sun.jna.Native;
import com.sun.jna.ptr.IntByReference;

/**
 * A process {@link NativeSpawn} spawned: its exit is learnt by the {@link ExitWatch} that watches
 * every rank's pidfd on one thread, or, where there is none or no pidfd can be had, by a blocking
 * {@code waitpid} on a thread of {@link #REAPERS}; either way it is reported as Java does (the
 * code, or 128 + the signal). Only this process waits for its pid. Thread-safe.
 */
final class NativeProcess extends Process {

    private static final ExecutorService REAPERS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "mpiproxy-rank-reaper");
        t.setDaemon(true);
        return t;
    });

    private final NativeSpawn.LibC libc;
    private final int pid;
    private final InputStream out;
    private final InputStream err;
    private final CompletableFuture<Integer> exit = new CompletableFuture<>();

    /**
     * @param exits watches the exit, {@code null} for a thread of {@link #REAPERS}
     */
    NativeProcess(NativeSpawn.LibC libc, int pid, InputStream out, InputStream err, ExitWatch exits) {
        this.libc = libc;
        this.pid = pid;
        this.out = out;
        this.err = err;
        if (exits == null || !exits.watch(pid, exit)) {
            REAPERS.execute(this::reap);
        }
    }

    private void reap() {
        IntByReference status = new IntByReference();
        while (true) {
            int r = libc.waitpid(pid, status, 0);
            if (r == pid) {
                exit.complete(NativeSpawn.exitValue(status.getValue()));
                return;
            }
            int errno = Native.getLastError();
            if (r < 0 && errno != NativeSpawn.EINTR) {
                exit.completeExceptionally(new IOException("waitpid " + pid + ": " + libc.strerror(errno)));
                return;
            }
        }
    }

    @Override
    public OutputStream getOutputStream() {
        return OutputStream.nullOutputStream();
    }

    @Override
    public InputStream getInputStream() {
        return out;
    }

    @Override
    public InputStream getErrorStream() {
        return err;
    }

    @Override
    public int waitFor() throws InterruptedException {
        try {
            return exit.get();
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    @Override
    public boolean waitFor(long timeout, TimeUnit unit) throws InterruptedException {
        try {
            exit.get(timeout, unit);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    @Override
    public int exitValue() {
        if (!exit.isDone()) {
            throw new IllegalThreadStateException("process " + pid + " has not exited");
        }
        return exit.join();
    }

    @Override
    public void destroy() {
        // once reaped the pid may belong to another process: signal only while it is ours
        if (!exit.isDone()) {
            libc.kill(pid, NativeSpawn.SIGTERM);
        }
    }

    @Override
    public Process destroyForcibly() {
        if (!exit.isDone()) {
            libc.kill(pid, NativeSpawn.SIGKILL);
        }
        return this;
    }

    @Override
    public boolean isAlive() {
        return !exit.isDone();
    }

    @Override
    public long pid() {
        return pid;
    }

    @Override
    public CompletableFuture<Process> onExit() {
        return exit.handle((status, failure) -> this);
    }

    @Override
    public ProcessHandle toHandle() {
        return ProcessHandle.of(pid).orElseThrow(() -> new IllegalStateException("process " + pid + " has ended"));
    }

    @Override
    public Stream<ProcessHandle> descendants() {
        return ProcessHandle.of(pid).map(ProcessHandle::descendants).orElseGet(Stream::empty);
    }

    @Override
    public String toString() {
        return "Process[pid=" + pid + ", spawned natively, " + (exit.isDone() ? "exitValue=" + exit.join() : "alive")
                + "]";
    }
}
