package org.mpiproxy.proxy.internal;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

import org.mpiproxy.protocol.ExecCommand;
import org.mpiproxy.protocol.ExecEnvironment;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/**
 * The jobs' common environments on this node (docs/protocol-v2.md 5.10): a launcher sends a job's
 * environment once per node as ENVIRONMENT fragments named by its SHA-256, as STAGE sends a
 * program, and the job's plain EXECs with {@link V2HeaderDescriptor#FLAG_ENVIRONMENT} name it by
 * that digest; {@link #command} gives such an EXEC's command with the environment's variables
 * first and the rank's own after them (they win). Held in memory only: at most
 * {@code exec.environment.max.bytes} of one job (complete and arriving together), of at most
 * {@link #MAX_JOBS} jobs at once; an environment is dropped when its job ends ({@link #forget})
 * or when nothing used it for {@link #IDLE_NANOS}. An EXEC naming one the node does not hold is
 * refused with {@link MpiErrors#ERR_NO_ENVIRONMENT}, and its launcher sends it again. Receive
 * thread only.
 */
final class V2JobEnvironments {

    /** Default of {@code exec.environment.max.bytes}: the most bytes of one job's environments. */
    static final long DEFAULT_MAX_BYTES = 256 * 1024;
    /** The most jobs holding environments at once. */
    static final int MAX_JOBS = 64;
    /** An environment nothing used (a fragment, a probe, an EXEC) for this long is dropped. */
    static final long IDLE_NANOS = 60_000_000_000L;
    private static final int DIGEST = ExecEnvironment.DIGEST_LENGTH;

    /** An EXEC refused before it starts anything: the result code, the message its one-line reason. */
    static final class Refused extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;
        final int result;

        Refused(int result, String reason) {
            super(reason);
            this.result = result;
        }
    }

    /** One environment of a job, arriving or complete. */
    private static final class Environment {
        final int length;
        final int chunk;
        final int count;
        final byte[] bytes;
        final BitSet have = new BitSet();
        Map<String, String> variables;
        long touched;

        Environment(int length, int chunk, int count) {
            this.length = length;
            this.chunk = chunk;
            this.count = count;
            this.bytes = new byte[length];
        }
    }

    private final LongSupplier maxBytes;
    /** By job id, then by the digest in hex. */
    private final Map<Long, Map<String, Environment>> jobs = new HashMap<>();

    /** @param maxBytes {@code exec.environment.max.bytes} now: the most bytes of one job's environments */
    V2JobEnvironments(LongSupplier maxBytes) {
        this.maxBytes = maxBytes;
    }

    /**
     * A fragment of a job's environment, or the probe whether the node holds it.
     *
     * @param jobId   the job (the request's job id)
     * @param size    the environment's length (the argument)
     * @param index   this fragment (the sequence); any value for a probe
     * @param count   the environment's fragments (the ack); 0: a probe
     * @param chunk   bytes of every fragment but the last (the tag)
     * @param payload holds the digest, then this fragment's bytes
     * @param now     nanos as {@link System#nanoTime}, for dropping idle environments
     * @return what to answer
     */
    StagedPrograms.Outcome onFragment(long jobId, long size, long index, long count, int chunk, ByteBuffer payload,
                                      int offset, int length, long now) {
        purge(now);
        if (length < DIGEST) {
            return new StagedPrograms.Outcome(MpiErrors.ERR_ARG, false, "an ENVIRONMENT payload of " + length
                    + " bytes, shorter than its digest");
        }
        byte[] digest = new byte[DIGEST];
        payload.get(offset, digest);
        String name = HexFormat.of().formatHex(digest);
        Map<String, Environment> ofJob = jobs.get(jobId);
        Environment e = ofJob == null ? null : ofJob.get(name);
        if (e != null && e.variables != null) {
            e.touched = now;
            return new StagedPrograms.Outcome(MpiErrors.SUCCESS, true, null);
        }
        long max = maxBytes.getAsLong();
        long held = 0;
        for (Environment other : ofJob == null ? Map.<String, Environment>of().values() : ofJob.values()) {
            held += other == e ? 0 : other.length;
        }
        if (size < 0 || size + held > max) {
            return new StagedPrograms.Outcome(MpiErrors.ERR_MESSAGE_TOO_LARGE, false, "job " + Job.hex(jobId)
                    + ": an environment of " + size + " bytes" + (held > 0 ? " besides " + held + " held" : "")
                    + " is more than exec.environment.max.bytes=" + max, Math.max(0, max - held));
        }
        if (count == 0) {
            return new StagedPrograms.Outcome(MpiErrors.SUCCESS, false, null);
        }
        long expected = Math.max(1, (size + chunk - 1) / Math.max(1, chunk));
        if (chunk < 1 || count != expected || index < 0 || index >= count) {
            return new StagedPrograms.Outcome(MpiErrors.ERR_ARG, false, "ENVIRONMENT fields do not add up: length "
                    + size + ", fragment length " + chunk + ", fragment " + index + " of " + count);
        }
        int from = (int) (index * chunk);
        int bytes = (int) Math.min(chunk, size - from);
        if (length - DIGEST != bytes) {
            return new StagedPrograms.Outcome(MpiErrors.ERR_ARG, false, "ENVIRONMENT fragment " + index + " carries "
                    + (length - DIGEST) + " bytes, not " + bytes);
        }
        if (e == null) {
            if (ofJob == null && jobs.size() >= MAX_JOBS) {
                return new StagedPrograms.Outcome(MpiErrors.ERR_NO_MEM, false, "the environments of " + MAX_JOBS
                        + " jobs are held on this node: try later");
            }
            e = new Environment((int) size, chunk, (int) count);
            jobs.computeIfAbsent(jobId, j -> new LinkedHashMap<>()).put(name, e);
        } else if (e.chunk != chunk || e.count != count || e.length != size) {
            return new StagedPrograms.Outcome(MpiErrors.ERR_ARG, false, "ENVIRONMENT fragment " + index
                    + " announces another length or fragment length than the first");
        }
        e.touched = now;
        payload.get(offset + DIGEST, e.bytes, from, bytes);
        e.have.set((int) index);
        if (e.have.cardinality() < e.count) {
            return new StagedPrograms.Outcome(MpiErrors.SUCCESS, false, null);
        }
        String problem = null;
        if (!MessageDigest.isEqual(digest, ExecEnvironment.digest(e.bytes))) {
            problem = "job " + Job.hex(jobId) + ": the environment's content has another SHA-256 than its name";
        } else {
            try {
                e.variables = ExecEnvironment.decode(e.bytes);
                return new StagedPrograms.Outcome(MpiErrors.SUCCESS, true, null);
            } catch (IllegalArgumentException bad) {
                problem = "job " + Job.hex(jobId) + ": " + bad.getMessage();
            }
        }
        remove(jobId, name);
        return new StagedPrograms.Outcome(MpiErrors.ERR_ARG, false, problem);
    }

    /**
     * @param header an EXEC
     * @param plain  whether it has the PLAIN flag
     * @param now    nanos as {@link System#nanoTime}
     * @return its command; with {@link V2HeaderDescriptor#FLAG_ENVIRONMENT}, the job's environment
     *         named first, then the rank's variables
     * @throws Refused                  naming {@link MpiErrors#ERR_NO_ENVIRONMENT} when the node does
     *                                  not hold the environment named, else {@link MpiErrors#ERR_ARG}
     * @throws IllegalArgumentException when the command is malformed (MPI_ERR_ARG)
     */
    ExecCommand command(V2HeaderFlyweight header, boolean plain, long now) {
        int offset = header.payloadOffset();
        int length = header.payloadLength();
        if ((header.flags() & V2HeaderDescriptor.FLAG_ENVIRONMENT) == 0) {
            return plain ? ExecCommand.parsePlain(header.buffer(), offset, length)
                    : ExecCommand.parse(header.buffer(), offset, length);
        }
        if (!plain || length < DIGEST) {
            throw new Refused(MpiErrors.ERR_ARG, !plain ? "the ENVIRONMENT flag is for plain EXECs only"
                    : "a payload of " + length + " bytes, shorter than the environment's digest");
        }
        purge(now);
        byte[] digest = new byte[DIGEST];
        header.buffer().get(offset, digest);
        String name = HexFormat.of().formatHex(digest);
        ExecCommand rank = ExecCommand.parsePlain(header.buffer(), offset + DIGEST, length - DIGEST);
        Map<String, Environment> ofJob = jobs.get(header.jobId());
        Environment e = ofJob == null ? null : ofJob.get(name);
        if (e == null || e.variables == null) {
            throw new Refused(MpiErrors.ERR_NO_ENVIRONMENT, "job " + Job.hex(header.jobId()) + ": no environment "
                    + name.substring(0, 16) + "... on this node; send it again (ENVIRONMENT)");
        }
        e.touched = now;
        Map<String, String> merged = new LinkedHashMap<>(e.variables);
        merged.putAll(rank.environment());
        return new ExecCommand(rank.program(), rank.args(), merged);
    }

    /** Drops the environments of a job that ended. */
    void forget(long jobId) {
        jobs.remove(jobId);
    }

    /** @return the environments held, complete or arriving, of all jobs */
    int size() {
        int n = 0;
        for (Map<String, Environment> ofJob : jobs.values()) {
            n += ofJob.size();
        }
        return n;
    }

    private void remove(long jobId, String name) {
        Map<String, Environment> ofJob = jobs.get(jobId);
        if (ofJob != null && ofJob.remove(name) != null && ofJob.isEmpty()) {
            jobs.remove(jobId);
        }
    }

    private void purge(long now) {
        for (Iterator<Map<String, Environment>> jobIt = jobs.values().iterator(); jobIt.hasNext();) {
            Map<String, Environment> ofJob = jobIt.next();
            ofJob.values().removeIf(e -> now - e.touched > IDLE_NANOS);
            if (ofJob.isEmpty()) {
                jobIt.remove();
            }
        }
    }
}
