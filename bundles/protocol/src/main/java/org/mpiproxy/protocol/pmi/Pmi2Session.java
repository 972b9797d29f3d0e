package org.mpiproxy.protocol.pmi;

import java.nio.charset.StandardCharsets;

/**
 * The server's side of one rank's PMI-2 connection (docs/protocol-v2.md 5.7), after its
 * {@code fullinit} named an id given out: each message the rank sends ({@link Pmi2Wire}) is
 * answered from the job's key-value space and the node's attributes, which the caller keeps
 * ({@link Job}). A {@code kvs-fence} is answered later, by {@link #barrierOut}, once the job's
 * every rank has entered the fence (the same fences as PMI-1's {@code barrier_in}); an
 * {@code info-getnodeattr} with {@code wait=TRUE} of an attribute not put yet is answered by
 * {@link #nodeAttributeSet} once a rank of the node puts it. Bad input (a malformed message, a
 * key or value too long, a second {@code fullinit}, another job's space) gets the reply with
 * {@code rc=-1;errmsg=...;} and a one-line problem for the log; the connection goes on. Not
 * thread-safe: one thread per session.
 */
public final class Pmi2Session implements PmiConversation {

    /** The PMI-2 version this server speaks. */
    public static final String VERSION = "2";
    /** See {@link #VERSION}. */
    public static final String SUBVERSION = "0";

    /** What a session needs of its job, beyond PMI-1's. Called on the session's thread. */
    public interface Job extends PmiSession.Job {
        /**
         * Stores an attribute of this node for the job (seen by the job's ranks this server serves).
         *
         * @return {@code null}, or why it is refused
         */
        String putNodeAttribute(String key, String value);

        /** @return the node attribute's value, or {@code null} */
        String nodeAttribute(String key);
    }

    private final int rank;
    private final Job job;
    private boolean inBarrier;
    private boolean finalized;
    /** The request of a node attribute that waits for a rank to put it, or {@code null}. */
    private Pmi2Wire waiting;

    /**
     * @param rank the rank this connection is of
     * @param job  its job
     */
    public Pmi2Session(int rank, Job job) {
        this.rank = rank;
        this.job = job;
    }

    /**
     * @param fullinit the rank's {@code fullinit}, which the caller checked
     * @return the {@code fullinit-response}: version, rank, size, application number
     */
    public String fullinitResponse(Pmi2Wire fullinit) {
        return Pmi2Wire.format("fullinit-response", "rc", "0", "pmi-version", VERSION, "pmi-subversion", SUBVERSION,
                "rank", Integer.toString(rank), "size", Integer.toString(job.size()), "appnum", "0",
                "debugged", "FALSE", "pmiverbose", "FALSE", "thrid", fullinit.get("thrid"));
    }

    @Override
    public boolean inBarrier() {
        return inBarrier;
    }

    @Override
    public boolean finalized() {
        return finalized;
    }

    @Override
    public String barrierOut() {
        inBarrier = false;
        return Pmi2Wire.format("kvs-fence-response", "rc", "0", "thrid", thridOf(fenceRequest));
    }

    /** The {@code kvs-fence} the rank waits in, for its {@code thrid}. */
    private Pmi2Wire fenceRequest;

    @Override
    public String nodeAttributeSet() {
        if (waiting == null) {
            return "";
        }
        String value = job.nodeAttribute(waiting.get("key"));
        if (value == null) {
            return "";
        }
        Pmi2Wire request = waiting;
        waiting = null;
        return Pmi2Wire.format("info-getnodeattr-response", "rc", "0", "found", "TRUE", "value", value,
                "thrid", request.get("thrid"));
    }

    @Override
    public PmiSession.Reply onMessage(String body) {
        Pmi2Wire m;
        try {
            m = Pmi2Wire.parse(body);
        } catch (IllegalArgumentException e) {
            return error(null, "malformed message: " + e.getMessage());
        }
        if (waiting != null || inBarrier) {
            return error(m, "cmd=" + PmiLine.shorten(m.command()) + " while the rank waits for "
                    + (inBarrier ? "the fence" : "node attribute " + PmiLine.shorten(waiting.get("key"))));
        }
        switch (m.command()) {
            case "fullinit":
                return error(m, "a second fullinit");
            case "job-getid":
                return reply(m, "rc", "0", "jobid", job.kvsName());
            case "kvs-put":
                return put(m);
            case "kvs-get":
                return get(m);
            case "kvs-fence":
                inBarrier = true;
                fenceRequest = m;
                job.barrierIn(rank);
                return PmiSession.Reply.of("");
            case "info-putnodeattr":
                return putNodeAttribute(m);
            case "info-getnodeattr":
                return getNodeAttribute(m);
            case "info-getjobattr":
                return jobAttribute(m);
            case "finalize":
                finalized = true;
                return new PmiSession.Reply(Pmi2Wire.format("finalize-response", "rc", "0", "thrid",
                        m.get("thrid")), true, null);
            case "abort":
                return abort(m);
            case "spawn":
                return error(m, "MPI_Comm_spawn refused: spawning processes is not supported");
            default:
                return error(m, "unknown command cmd=" + PmiLine.shorten(m.command()));
        }
    }

    private PmiSession.Reply put(Pmi2Wire m) {
        String key = m.get("key");
        String value = m.get("value");
        String problem = key == null || value == null ? "kvs-put without key= or value="
                : checkKey(key) != null ? "kvs-put " + checkKey(key)
                : bytes(value) > PmiSession.VALUE_MAX ? "kvs-put value of " + bytes(value) + " bytes, more than "
                        + PmiSession.VALUE_MAX
                : job.put(rank, key, value);
        if (problem != null && !problem.startsWith("kvs-put")) {
            problem = "kvs-put " + problem;
        }
        return problem != null ? error(m, problem) : reply(m, "rc", "0");
    }

    private PmiSession.Reply get(Pmi2Wire m) {
        String key = m.get("key");
        String jobId = m.get("jobid");
        String problem = key == null ? "kvs-get without key=" : checkKey(key) != null ? "kvs-get " + checkKey(key)
                : jobId != null && !jobId.isEmpty() && !jobId.equals(job.kvsName()) ? "kvs-get for job "
                        + PmiLine.shorten(jobId) + ", not this job's " + job.kvsName()
                : null;
        if (problem != null) {
            return error(m, problem);
        }
        String value = job.get(key);
        // a key not (yet) put is a normal answer: MPICH asks for one to wait out a fence
        return value == null ? reply(m, "rc", "0", "found", "FALSE")
                : reply(m, "rc", "0", "found", "TRUE", "value", value);
    }

    private PmiSession.Reply putNodeAttribute(Pmi2Wire m) {
        String key = m.get("key");
        String value = m.get("value");
        String problem = key == null || value == null ? "info-putnodeattr without key= or value="
                : checkKey(key) != null ? "info-putnodeattr " + checkKey(key)
                : bytes(value) > PmiSession.VALUE_MAX ? "info-putnodeattr value of " + bytes(value)
                        + " bytes, more than " + PmiSession.VALUE_MAX
                : job.putNodeAttribute(key, value);
        if (problem != null && !problem.startsWith("info-putnodeattr")) {
            problem = "info-putnodeattr " + problem;
        }
        return problem != null ? error(m, problem) : reply(m, "rc", "0");
    }

    private PmiSession.Reply getNodeAttribute(Pmi2Wire m) {
        String key = m.get("key");
        String wait = m.get("wait");
        String problem = key == null ? "info-getnodeattr without key=" : checkKey(key) != null
                ? "info-getnodeattr " + checkKey(key)
                : wait != null && !wait.equals("TRUE") && !wait.equals("FALSE") ? "info-getnodeattr wait="
                        + PmiLine.shorten(wait) + ", not TRUE or FALSE"
                : null;
        if (problem != null) {
            return error(m, problem);
        }
        String value = job.nodeAttribute(key);
        if (value != null) {
            return reply(m, "rc", "0", "found", "TRUE", "value", value);
        }
        if ("TRUE".equals(wait)) {
            waiting = m;
            return PmiSession.Reply.of("");
        }
        return reply(m, "rc", "0", "found", "FALSE");
    }

    private PmiSession.Reply jobAttribute(Pmi2Wire m) {
        String key = m.get("key");
        if (key == null) {
            return error(m, "info-getjobattr without key=");
        }
        String value = key.equals("universeSize") ? Integer.toString(job.size())
                : key.equals("PMI_process_mapping") ? job.get(key) : null;
        return value == null ? reply(m, "rc", "0", "found", "FALSE")
                : reply(m, "rc", "0", "found", "TRUE", "value", value);
    }

    private PmiSession.Reply abort(Pmi2Wire m) {
        String message = m.get("msg");
        // the job's launcher reads PMI-1's message=, where '_' stands for a space
        job.abort(rank, 1, message == null || message.isBlank() ? null
                : message.strip().replaceAll("\\s+", "_"));
        return new PmiSession.Reply("", true, null);
    }

    private static String checkKey(String key) {
        int n = bytes(key);
        return n == 0 || n > PmiSession.KEY_MAX ? "key of " + n + " bytes, not 1.." + PmiSession.KEY_MAX : null;
    }

    private static int bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8).length;
    }

    private static String thridOf(Pmi2Wire request) {
        return request == null ? null : request.get("thrid");
    }

    /** @return the reply to {@code m}: {@code <command>-response} with the attributes and its thrid */
    private static PmiSession.Reply reply(Pmi2Wire m, String... attributes) {
        String[] all = java.util.Arrays.copyOf(attributes, attributes.length + 2);
        all[attributes.length] = "thrid";
        all[attributes.length + 1] = m.get("thrid");
        return PmiSession.Reply.of(Pmi2Wire.format(m.command() + "-response", all));
    }

    private static PmiSession.Reply error(Pmi2Wire m, String problem) {
        String command = m == null ? "error" : m.command() + "-response";
        return new PmiSession.Reply(Pmi2Wire.format(command, "rc", "-1", "errmsg", problem,
                "thrid", m == null ? null : m.get("thrid")), false, problem);
    }
}
