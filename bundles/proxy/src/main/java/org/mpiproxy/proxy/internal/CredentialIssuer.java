package org.mpiproxy.proxy.internal;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.function.LongSupplier;

import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.JobCredential;

/**
 * Answers the requests of the local socket (docs/protocol-v2.md 4.2): a job credential (4.1) of
 * the caller's uid and gid, as the kernel named them, for a new random job id or a given one,
 * with its job key; and {@link #issue issues} those MUNGE vouches for (4.3). Signed with the cluster key that signs what this node sends. Thread-safe.
 */
final class CredentialIssuer {

    /** The request; alone, for a new job. */
    static final String REQUEST = "CREDENTIAL";
    /** Default of {@code identity.credential.seconds}. */
    static final long DEFAULT_LIFETIME_SECONDS = 3600;
    /** Longest lifetime {@code identity.credential.seconds} may set: a week. */
    static final long MAX_LIFETIME_SECONDS = 604_800;

    private static final HexFormat HEX = HexFormat.of();

    private final ClusterKeys keys;
    private final long nodeId;
    private final LongSupplier clockMillis;
    private final SecureRandom random;
    private final long lifetimeMillis;

    /**
     * @param keys            the cluster keys; the one that signs what this node sends signs the credentials
     * @param nodeId          this node's id ({@link org.mpiproxy.protocol.NodeIds#of}), the issuer
     * @param clockMillis     milliseconds since the epoch
     * @param random          draws job ids and nonces
     * @param lifetimeSeconds how long a credential is valid, 1..{@value #MAX_LIFETIME_SECONDS}
     * @throws IllegalArgumentException when the keys hold no cluster key to sign with (a job key's), or
     *                                  the lifetime is out of range
     */
    CredentialIssuer(ClusterKeys keys, long nodeId, LongSupplier clockMillis, SecureRandom random,
                     long lifetimeSeconds) {
        if (keys.sendKeyId() == JobCredential.JOB_KEY_ID) {
            throw new IllegalArgumentException("a job key cannot sign credentials; a cluster key is needed");
        }
        this.keys = keys;
        this.nodeId = nodeId;
        this.clockMillis = clockMillis;
        this.random = random;
        this.lifetimeMillis = lifetime(lifetimeSeconds) * 1000;
    }

    /**
     * @param seconds {@code identity.credential.seconds}
     * @return {@code seconds}
     * @throws IllegalArgumentException naming the key and value when it is not 1..{@value #MAX_LIFETIME_SECONDS}
     */
    static long lifetime(long seconds) {
        if (seconds < 1 || seconds > MAX_LIFETIME_SECONDS) {
            throw new IllegalArgumentException("identity.credential.seconds=" + seconds + " must be in 1.."
                    + MAX_LIFETIME_SECONDS);
        }
        return seconds;
    }

    /** @return the cluster keys it signs with */
    ClusterKeys keys() {
        return keys;
    }

    /**
     * @param line the request line, without its line end
     * @param uid  the caller's uid, as the kernel tells it
     * @param gid  the caller's gid, as the kernel tells it
     * @return the reply line, without its line end: {@code OK <job id> <credential> <job key>} in
     *         lower-case hexadecimal, or {@code ERR <why>}
     */
    String answer(String line, long uid, long gid) {
        long jobId;
        if (line.equals(REQUEST)) {
            jobId = newJobId();
        } else if (line.startsWith(REQUEST + " ") && line.length() == REQUEST.length() + 17
                && line.chars().skip(REQUEST.length() + 1).allMatch(HexFormat::isHexDigit)) {
            jobId = HEX.fromHexDigitsToLong(line, REQUEST.length() + 1, line.length());
            if (jobId == 0) {
                return "ERR job id 0 names no job";
            }
        } else {
            return "ERR unknown request; send " + REQUEST + " or " + REQUEST + " <job id, 16 hexadecimal digits>";
        }
        JobCredential credential;
        try {
            credential = issue(jobId, uid, gid);
        } catch (IllegalArgumentException e) {
            return "ERR " + e.getMessage();
        }
        return "OK " + credential.jobIdHex() + " " + HEX.formatHex(credential.encode(keys)) + " "
                + HEX.formatHex(credential.jobKey(keys));
    }

    /**
     * @param jobId the job, or 0 for a new random one
     * @param uid   the user, as something trusted named her (the kernel, MUNGE)
     * @param gid   her group
     * @return her credential for that job, valid from now for the lifetime
     * @throws IllegalArgumentException when uid or gid is not an unsigned 32-bit number
     */
    JobCredential issue(long jobId, long uid, long gid) {
        long now = clockMillis.getAsLong();
        return new JobCredential(keys.sendKeyId(), uid, gid, jobId == 0 ? newJobId() : jobId, now,
                now + lifetimeMillis, nodeId, random.nextLong());
    }

    private long newJobId() {
        long id;
        do {
            id = random.nextLong();
        } while (id == 0);
        return id;
    }
}
