package org.mpiproxy.protocol;

/**
 * The job keys a proxy knows (docs/protocol-v2.md 4.1), by job id: for each the credential that
 * made it known, a {@link HmacSha256} of the job key and until when it is kept ({@link #KEPT}: as
 * long as the node has the job). An open-addressing hash table with linear probing over arrays;
 * {@link #find} allocates nothing, {@link #put} only when the table grows. Not thread-safe.
 */
final class JobKeyTable {

    /** {@link #until}: kept until removed (the node has the job). */
    static final long KEPT = Long.MAX_VALUE;

    /** Job ids by slot; 0 marks an empty slot (no job has id 0). */
    private long[] jobIds;
    private HmacSha256[] macs;
    private JobCredential[] credentials;
    private long[] until;
    private int size;

    JobKeyTable() {
        allocate(16);
    }

    /** @return the slot of the job, or -1 when the table has no key for it */
    int find(long jobId) {
        if (jobId == 0) {
            return -1;
        }
        int mask = jobIds.length - 1;
        for (int i = home(jobId, mask); jobIds[i] != 0; i = (i + 1) & mask) {
            if (jobIds[i] == jobId) {
                return i;
            }
        }
        return -1;
    }

    HmacSha256 mac(int slot) {
        return macs[slot];
    }

    JobCredential credential(int slot) {
        return credentials[slot];
    }

    long until(int slot) {
        return until[slot];
    }

    void until(int slot, long millis) {
        until[slot] = millis;
    }

    /** @return the job id in a slot, 0 when it is empty; slots are 0 .. {@link #slots()} - 1 */
    long jobId(int slot) {
        return jobIds[slot];
    }

    int slots() {
        return jobIds.length;
    }

    int size() {
        return size;
    }

    /**
     * Makes a credential's job key known: see {@link V2Authenticator#acceptCredential}.
     *
     * @param keys       the cluster keys that derive it
     * @param skewMillis how long after its expiry a credential is still valid
     * @param pendingMax most keys of jobs not {@link #KEPT}
     * @param keep       {@link #KEPT} at once (the node has the job), outside {@code pendingMax}
     * @return a {@code V2Authenticator.CREDENTIAL_*} result
     */
    int accept(JobCredential c, ClusterKeys keys, long skewMillis, long nowMillis, int pendingMax, boolean keep) {
        long expiry = keep ? KEPT
                : c.expiresMillis() > KEPT - 1 - skewMillis ? KEPT - 1 : c.expiresMillis() + skewMillis;
        int slot = find(c.jobId());
        if (slot >= 0) {
            JobCredential known = credentials[slot];
            if (known.uid() != c.uid() || known.gid() != c.gid()) {
                return V2Authenticator.CREDENTIAL_OTHER_USER;
            }
            // the same user's credential under another cluster key derives another key: the latest serves
            put(c, known.keyId() == c.keyId() ? macs[slot] : new HmacSha256(c.jobKey(keys)),
                    Math.max(expiry, until[slot]));
            return V2Authenticator.CREDENTIAL_ACCEPTED;
        }
        if (!keep && removeExpired(nowMillis) >= pendingMax) {
            return V2Authenticator.CREDENTIAL_TABLE_FULL;
        }
        put(c, new HmacSha256(c.jobKey(keys)), expiry);
        return V2Authenticator.CREDENTIAL_ACCEPTED;
    }

    /** Adds the key of the credential's job, or replaces the one the table has for it. */
    void put(JobCredential credential, HmacSha256 mac, long untilMillis) {
        int slot = find(credential.jobId());
        if (slot < 0) {
            if ((size + 1) * 2 > jobIds.length) {
                grow();
            }
            int mask = jobIds.length - 1;
            slot = home(credential.jobId(), mask);
            while (jobIds[slot] != 0) {
                slot = (slot + 1) & mask;
            }
            jobIds[slot] = credential.jobId();
            size++;
        }
        macs[slot] = mac;
        credentials[slot] = credential;
        until[slot] = untilMillis;
    }

    /** @return whether the table had a key for the job (it has none now) */
    boolean remove(long jobId) {
        int hole = find(jobId);
        if (hole < 0) {
            return false;
        }
        int mask = jobIds.length - 1;
        // backward-shift deletion: every entry after the hole that may live there moves up
        for (int i = (hole + 1) & mask; jobIds[i] != 0; i = (i + 1) & mask) {
            int home = home(jobIds[i], mask);
            if (((i - home) & mask) >= ((i - hole) & mask)) {
                move(i, hole);
                hole = i;
            }
        }
        jobIds[hole] = 0;
        macs[hole] = null;
        credentials[hole] = null;
        size--;
        return true;
    }

    /**
     * Removes the keys kept until before {@code nowMillis}.
     *
     * @return the keys left that are not {@link #KEPT}
     */
    int removeExpired(long nowMillis) {
        int pending = 0;
        for (int i = 0; i < jobIds.length; i++) {
            // a removal may move a later entry into this slot: look at it again
            while (jobIds[i] != 0 && until[i] < nowMillis) {
                remove(jobIds[i]);
            }
        }
        for (int i = 0; i < jobIds.length; i++) {
            if (jobIds[i] != 0 && until[i] != KEPT) {
                pending++;
            }
        }
        return pending;
    }

    private void move(int from, int to) {
        jobIds[to] = jobIds[from];
        macs[to] = macs[from];
        credentials[to] = credentials[from];
        until[to] = until[from];
    }

    private void grow() {
        long[] oldIds = jobIds;
        HmacSha256[] oldMacs = macs;
        JobCredential[] oldCredentials = credentials;
        long[] oldUntil = until;
        allocate(oldIds.length * 2);
        size = 0;
        for (int i = 0; i < oldIds.length; i++) {
            if (oldIds[i] != 0) {
                put(oldCredentials[i], oldMacs[i], oldUntil[i]);
            }
        }
    }

    private void allocate(int slots) {
        jobIds = new long[slots];
        macs = new HmacSha256[slots];
        credentials = new JobCredential[slots];
        until = new long[slots];
    }

    private static int home(long jobId, int mask) {
        long h = jobId * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32)) & mask;
    }
}
