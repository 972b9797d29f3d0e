package org.mpiproxy.mpi.internal.engine;

/**
 * What a pending operation waits for: the rank the fabric should watch, and the words a timed-out
 * wait fails with.
 */
final class Pending {

    private Pending() {
    }

    /** @return the rank {@code op} waits for: a receive's source (any for {@link Engine#ANY_SOURCE}), a send's destination */
    static int awaited(Operation op) {
        if (op instanceof Operation.Recv r) {
            return r.wantSource == Engine.ANY_SOURCE ? Fabric.EVERY_PEER : r.wantSource;
        }
        return op instanceof Operation.Send s ? s.dest : Fabric.EVERY_PEER;
    }

    static String describe(Operation op) {
        if (op instanceof Schedule s) {
            return s.describe();
        }
        if (op instanceof Operation.Recv r) {
            return noMessage(r.wantSource, r.wantTag);
        }
        Operation.Send s = (Operation.Send) op;
        return "rank " + s.dest + " did not take a message of " + s.bytes + " bytes";
    }

    static String noMessage(int source, int tag) {
        return "no message from " + (source == Engine.ANY_SOURCE ? "any rank" : "rank " + source)
                + (tag == Engine.ANY_TAG ? "" : " with tag " + tag) + " arrived";
    }
}
