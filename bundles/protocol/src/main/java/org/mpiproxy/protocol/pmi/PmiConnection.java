package org.mpiproxy.protocol.pmi;

import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;

/**
 * One rank's connection to a {@link PmiServer}: its bytes in and out, who it turned out to be,
 * and what its session asks of the job (a put also goes to the job's launcher). PMI thread only.
 */
final class PmiConnection implements Pmi2Session.Job {

    private final PmiServer server;
    final SocketChannel channel;
    final long accepted;
    final PmiReader in = new PmiReader();
    final ArrayDeque<ByteBuffer> out = new ArrayDeque<>();
    PmiRanks.Expected who;
    PmiJob job;
    PmiConversation session;
    /** Barriers this rank entered. */
    int barriers;
    long pidWaitStart;
    String pendingHandshake;
    /** The uid the connection proved to be of, -1 until its handshake completed. */
    long uid = -1;
    /** When it last sent or was sent something, on the server's clock. */
    long active;
    /** The client's port. */
    final int peerPort;
    /**
     * The uid owning the client's socket as the kernel's table lists it ({@link PmiWaitingPool}), -1
     * when it does not; {@link PmiWaitingPool#NOT_LOOKED_UP} until the pool of waiting ones is full.
     */
    long peerUid = PmiWaitingPool.NOT_LOOKED_UP;

    /**
     * @param server   its server
     * @param channel  the accepted socket
     * @param accepted when, on the server's clock
     * @param peerPort the client's port
     */
    PmiConnection(PmiServer server, SocketChannel channel, long accepted, int peerPort) {
        this.server = server;
        this.channel = channel;
        this.accepted = accepted;
        this.active = accepted;
        this.peerPort = peerPort;
    }

    @Override
    public int size() {
        return who.size;
    }

    @Override
    public String kvsName() {
        return PmiServer.kvsName(who.jobId);
    }

    @Override
    public String put(int rank, String key, String value) {
        String problem;
        synchronized (job) {
            problem = job.space.put(key, value);
        }
        if (problem == null && !server.relay(who.jobId, rank, PmiLine.putLine(key, value))) {
            problem = "cannot reach the job's launcher: the rank's EXEC did not ask for its output";
        }
        return problem;
    }

    @Override
    public String get(String key) {
        synchronized (job) {
            return job.space.get(key);
        }
    }

    @Override
    public String putNodeAttribute(String key, String value) {
        String problem;
        synchronized (job) {
            problem = job.putNodeAttribute(key, value);
        }
        if (problem == null) {
            server.post(() -> server.wakeNodeWaiters(job));
            // the job's other servers on this machine (the launcher's, another proxy's) learn it through the launcher
            server.relay(who.jobId, who.rank, PmiLine.pairLine("putnodeattr", key, value));
        }
        return problem;
    }

    @Override
    public String nodeAttribute(String key) {
        synchronized (job) {
            return job.nodeAttributes.get(key);
        }
    }

    @Override
    public void barrierIn(int rank) {
        barriers++;
        server.relay(who.jobId, rank, "cmd=barrier_in");
        server.releaseIfFenced(job);
    }

    @Override
    public void abort(int rank, int exitCode, String message) {
        server.relay(who.jobId, rank, message == null ? "cmd=abort exitcode=" + exitCode
                : "cmd=abort exitcode=" + exitCode + " message=" + message);
    }

}
