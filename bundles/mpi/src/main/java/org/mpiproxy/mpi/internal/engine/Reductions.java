package org.mpiproxy.mpi.internal.engine;

import java.nio.ByteBuffer;

/**
 * The blocking reductions of {@link Collectives}: binomial-tree reduce, recursive-doubling
 * all-reduce and scan. Each step combines the partial results of two runs of consecutive ranks,
 * the lower run's on the left, so an operation that is not commutative gives MPI's rank order:
 * its reduce goes up the tree of rank 0 (whose subtrees are such runs), and rank 0 hands the
 * result to the root; a commutative one goes up the root's own tree.
 */
final class Reductions {

    private Reductions() {
    }

    static void reduce(Collectives.Step s, ByteBuffer send, ByteBuffer recv, int count, Combiner op) {
        Kind kind = s.kind;
        op.check(kind);
        Communicator c = s.c;
        int n = c.size();
        int bytes = count * kind.size();
        int top = op.commutative() ? s.root : 0;
        int v = (c.rank() - top + n) % n;
        ByteBuffer acc = Collectives.copy(send, bytes);
        ByteBuffer tmp = Collectives.heap(bytes);
        for (int mask = 1; mask < n; mask <<= 1) {
            if ((v & mask) == 0) {
                if ((v | mask) < n) {
                    s.receive(((v | mask) + top) % n, tmp, 0, bytes);
                    op.apply(kind, count, acc, 0, tmp, 0);
                }
            } else {
                s.send(((v & ~mask) + top) % n, acc, 0, bytes);
                break;
            }
        }
        if (top != s.root && v == 0) {
            s.send(s.root, acc, 0, bytes);
        } else if (top != s.root && c.rank() == s.root) {
            s.receive(top, acc, 0, bytes);
        }
        if (c.rank() == s.root) {
            recv.put(0, acc, 0, bytes);
        }
    }

    static void allReduce(Collectives.Step s, ByteBuffer send, ByteBuffer recv, int count, Combiner op) {
        Kind kind = s.kind;
        op.check(kind);
        int n = s.c.size();
        int r = s.c.rank();
        int bytes = count * kind.size();
        ByteBuffer acc = Collectives.copy(send, bytes);
        ByteBuffer tmp = Collectives.heap(bytes);
        int pof2 = Integer.highestOneBit(n);
        int rem = n - pof2;
        // the first 2*rem ranks pair up so that a power of two takes part in the doubling; each
        // takes part for a run of consecutive ranks, in rank order
        int mine;
        if (r < 2 * rem) {
            if ((r & 1) == 0) {
                s.send(r + 1, acc, 0, bytes);
                mine = -1;
            } else {
                s.receive(r - 1, tmp, 0, bytes);
                op.applyBefore(kind, count, acc, 0, tmp, 0);
                mine = r / 2;
            }
        } else {
            mine = r - rem;
        }
        if (mine >= 0) {
            for (int mask = 1; mask < pof2; mask <<= 1) {
                int other = mine ^ mask;
                int peer = other < rem ? other * 2 + 1 : other + rem;
                s.exchange(peer, acc, 0, bytes, peer, tmp, 0, bytes);
                if (other < mine) {
                    op.applyBefore(kind, count, acc, 0, tmp, 0);
                } else {
                    op.apply(kind, count, acc, 0, tmp, 0);
                }
            }
        }
        if (r < 2 * rem) {
            if ((r & 1) == 1) {
                s.send(r - 1, acc, 0, bytes);
            } else {
                s.receive(r + 1, acc, 0, bytes);
            }
        }
        recv.put(0, acc, 0, bytes);
    }

    /**
     * Scan ({@code inclusive}) or exclusive scan: {@code partial} combines the run of ranks met so
     * far, {@code result} its part up to this rank.
     */
    static void prefix(Collectives.Step s, ByteBuffer send, ByteBuffer recv, int count, Combiner op,
                       boolean inclusive) {
        Kind kind = s.kind;
        op.check(kind);
        int n = s.c.size();
        int r = s.c.rank();
        int bytes = count * kind.size();
        ByteBuffer partial = Collectives.copy(send, bytes);
        ByteBuffer result = inclusive ? Collectives.copy(send, bytes) : Collectives.heap(bytes);
        boolean have = inclusive;
        ByteBuffer tmp = Collectives.heap(bytes);
        for (int mask = 1; mask < n; mask <<= 1) {
            int peer = r ^ mask;
            if (peer < n) {
                s.exchange(peer, partial, 0, bytes, peer, tmp, 0, bytes);
                if (peer < r) {
                    op.applyBefore(kind, count, partial, 0, tmp, 0);
                    if (have) {
                        op.applyBefore(kind, count, result, 0, tmp, 0);
                    } else {
                        result.put(0, tmp, 0, bytes);
                        have = true;
                    }
                } else {
                    op.apply(kind, count, partial, 0, tmp, 0);
                }
            }
        }
        if (have) {
            recv.put(0, result, 0, bytes);
        }
    }
}
