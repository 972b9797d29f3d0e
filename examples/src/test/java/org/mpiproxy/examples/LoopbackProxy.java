package org.mpiproxy.examples;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.mpiproxy.channel.shm.BackoffIdler;
import org.mpiproxy.channel.shm.MappedRankChannel;
import org.mpiproxy.protocol.ExecCommand;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V1HeaderDescriptor;
import org.mpiproxy.protocol.V1HeaderFlyweight;

/**
 * A minimal v1 proxy for one job on 127.0.0.1: launches the programs of a directory as local
 * ranks over real channel files and relays synchronously (RECV blocks until the rank wrote).
 */
final class LoopbackProxy implements AutoCloseable {

    /**
     * How long a rank may take to read or write (a freshly started rank first starts its JVM)
     * before this proxy counts it as hung: a ceiling only, every wait ends with the rank's act.
     */
    private static final long WAIT_NANOS = TimeUnit.MINUTES.toNanos(5);

    private final Path programs;
    private final Path work;
    private final DatagramChannel channel;
    private final Thread thread;
    private final Map<Integer, MappedRankChannel> channels = new HashMap<>();
    private final Map<Integer, Process> processes = new HashMap<>();
    private final List<Throwable> failures = new ArrayList<>();

    LoopbackProxy(Path programs, Path work) throws IOException {
        this.programs = programs;
        this.work = work;
        this.channel = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        this.thread = new Thread(this::run, "loopback-proxy");
        thread.setDaemon(true);
        thread.start();
    }

    int port() throws IOException {
        return ((InetSocketAddress) channel.getLocalAddress()).getPort();
    }

    synchronized List<Throwable> failures() {
        return List.copyOf(failures);
    }

    private void run() {
        ByteBuffer in = ByteBuffer.allocate(65536).order(ByteOrder.LITTLE_ENDIAN);
        V1HeaderFlyweight h = new V1HeaderFlyweight().wrap(in, 0);
        while (true) {
            try {
                in.clear();
                InetSocketAddress source = (InetSocketAddress) channel.receive(in);
                int length = in.position();
                switch (h.operation()) {
                    case V1HeaderDescriptor.OP_EXEC -> exec(h, length, source);
                    case V1HeaderDescriptor.OP_SEND -> send(h);
                    case V1HeaderDescriptor.OP_RECV -> recv(h, source);
                    case V1HeaderDescriptor.OP_TERMINATE -> terminate(h, source);
                    default -> throw new IllegalStateException("op " + h.operation());
                }
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException | RuntimeException | InterruptedException e) {
                synchronized (this) {
                    failures.add(e);
                }
            }
        }
    }

    private void exec(V1HeaderFlyweight h, int length, InetSocketAddress source) throws IOException {
        int rank = h.rankId();
        ExecCommand command = ExecCommand.parse(h.buffer(), V1HeaderDescriptor.HEADER_LENGTH,
                length - V1HeaderDescriptor.HEADER_LENGTH);
        Path file = work.resolve("rank-" + rank + ".chan");
        // 1 MiB rings (a real proxy has 2 MiB): this proxy reads no RECV while it waits for room in a ring
        channels.put(rank, MappedRankChannel.create(file, 1 << 20, 1, rank));
        List<String> argv = new ArrayList<>(List.of(programs.resolve(command.program()).toString(), "--slave",
                file.toString(), Integer.toString(rank), Integer.toString(h.coreCount())));
        argv.addAll(command.args());
        ProcessBuilder pb = new ProcessBuilder(argv)
                .redirectOutput(work.resolve("rank-" + rank + ".out").toFile())
                .redirectError(work.resolve("rank-" + rank + ".err").toFile());
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        pb.environment().put("MPIPROXY_PROGRAM", command.program());
        int result = MpiErrors.SUCCESS;
        try {
            processes.put(rank, pb.start());
        } catch (IOException e) {
            result = MpiErrors.ERR_IO;
        }
        reply(source, V1HeaderDescriptor.OP_EXEC, result, rank, 0, 0, 0, null, 0);
    }

    private void send(V1HeaderFlyweight h) {
        int size = MpiDatatype.sizeOf(h.datatype());
        int count = (int) h.datacount();
        long deadline = System.nanoTime() + WAIT_NANOS;
        BackoffIdler idler = new BackoffIdler();
        while (!channels.get(h.rankId()).toRank().offer(h.datatype(), count, h.buffer(), h.payloadOffset(), count * size)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("rank " + h.rankId() + " does not read");
            }
            idler.idle();
        }
    }

    private void recv(V1HeaderFlyweight h, InetSocketAddress source) throws IOException {
        int rank = h.rankId();
        int datatype = h.datatype();
        int size = MpiDatatype.sizeOf(datatype);
        int count = (int) h.datacount();
        ByteBuffer data = ByteBuffer.allocate(count * size);
        int got = 0;
        long deadline = System.nanoTime() + WAIT_NANOS;
        BackoffIdler idler = new BackoffIdler();
        while (got < count) {
            int n = channels.get(rank).fromRank().poll(datatype, data, got * size, count - got);
            if (n < 0 || System.nanoTime() > deadline) {
                reply(source, V1HeaderDescriptor.OP_RECV, n < 0 ? MpiErrors.ERR_TYPE : MpiErrors.ERR_OTHER, rank, 0,
                        datatype, 0, null, 0);
                return;
            }
            got += n;
            idler.idle(n);
        }
        for (int done = 0; done < count; ) {
            int k = Math.min(V1HeaderDescriptor.MAX_PAYLOAD_LENGTH / size, count - done);
            reply(source, V1HeaderDescriptor.OP_RECV, 0, rank, 0, datatype, k, data, done * size);
            done += k;
        }
    }

    private void terminate(V1HeaderFlyweight h, InetSocketAddress source) throws IOException, InterruptedException {
        int rank = h.rankId();
        Process p = processes.remove(rank);
        int status = -1;
        if (p != null && p.waitFor(WAIT_NANOS, TimeUnit.NANOSECONDS)) {
            status = p.exitValue();
        } else if (p != null) {
            p.destroyForcibly();
        }
        MappedRankChannel ch = channels.remove(rank);
        if (ch != null) {
            ch.close();
            java.nio.file.Files.delete(ch.path());
        }
        reply(source, V1HeaderDescriptor.OP_TERMINATE, 0, rank, 0, 0, status, null, 0);
    }

    private void reply(InetSocketAddress to, int op, int result, int rank, int core, int type, long count,
            ByteBuffer data, int offset) throws IOException {
        int length = data == null ? 0 : (int) count * MpiDatatype.sizeOf(type);
        ByteBuffer out = ByteBuffer.allocate(V1HeaderDescriptor.HEADER_LENGTH + length);
        new V1HeaderFlyweight().wrap(out, 0).set(op, result, rank, core, type, count);
        if (data != null) {
            out.put(V1HeaderDescriptor.HEADER_LENGTH, data, offset, length);
        }
        channel.send(out, to);
    }

    @Override
    public void close() throws IOException {
        channel.close();
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        processes.values().forEach(Process::destroyForcibly);
        channels.values().forEach(MappedRankChannel::close);
    }
}
