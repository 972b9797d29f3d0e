package org.mpiproxy.api;

/**
 * The user a job's ranks run as when the job was started by a user through a job credential
 * (docs/protocol-v2.md 4.1), not by a holder of the cluster key.
 *
 * @param uid the user id, 0 .. 2^32-1
 * @param gid the group id, 0 .. 2^32-1
 */
public record RankIdentity(long uid, long gid) {

    private static final long MAX_ID = 0xFFFF_FFFFL;

    /** @throws IllegalArgumentException when an id is not an unsigned 32-bit number */
    public RankIdentity {
        if (uid < 0 || uid > MAX_ID || gid < 0 || gid > MAX_ID) {
            throw new IllegalArgumentException("uid " + uid + " or gid " + gid + " is not 0.." + MAX_ID);
        }
    }

    @Override
    public String toString() {
        return uid + ":" + gid;
    }
}
