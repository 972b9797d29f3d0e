package org.mpiproxy.mpi.internal.engine;

/**
 * Every link of one process to the other ranks of its world, opened when first needed: the
 * engine asks for the link to a destination when it sends, says from whom it expects messages
 * when it posts a receive, and polls what is open. One thread at a time.
 */
public interface Fabric extends AutoCloseable {

    /** Passed to {@link #listen} for "any rank". */
    int EVERY_PEER = -1;

    /**
     * @param peer a rank of the world other than this process
     * @return the link that carries messages to {@code peer}
     * @throws CommFailure when no link to {@code peer} can be had
     */
    Link link(int peer);

    /**
     * Makes sure that messages from {@code peer} are polled from now on.
     *
     * @param peer a rank, or {@link #EVERY_PEER}
     */
    void listen(int peer);

    /**
     * Polls every link that is listened to.
     *
     * @param sink receives each whole message
     * @return the number of messages delivered
     */
    int poll(Link.Sink sink);

    /**
     * Called while the engine waits without progress: checks that the world is still there (the
     * proxy's lifeline, the nodes' liveness) and may sleep a little longer than the engine would.
     *
     * @param idleNanos how long the engine has waited without progress
     * @throws CommFailure when a peer or the proxy is gone
     */
    default void idle(long idleNanos) {
    }

    /**
     * As {@link #idle(long)}, for an engine that waits for messages from {@code awaited}: a fabric
     * that knows that the peer cannot answer (it refused a message sent to it) fails the wait now.
     *
     * @param idleNanos how long the engine has waited without progress
     * @param awaited   the peer waited for, or {@link #EVERY_PEER} when it may be any
     * @throws CommFailure when a peer or the proxy is gone
     */
    default void idle(long idleNanos, int awaited) {
        idle(idleNanos);
    }

    /** Releases every link. Idempotent. */
    @Override
    void close();
}
