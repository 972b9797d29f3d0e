package org.mpiproxy.protocol.pmi;

/**
 * The server's side of one rank's PMI-1 connection, after the port handshake: each line the
 * rank sends is answered from the job's key-value space, which the caller keeps
 * ({@link Job}); a {@code barrier_in} is answered later, by {@link #barrierOut}, once the job's
 * every rank has entered the barrier. Bad input (a malformed line, a second {@code init}, keys
 * or values beyond {@code get_maxes}, a {@code put} for another key-value space) gets the PMI
 * error reply ({@code rc=-1 msg=...}) and a one-line problem for the log; the connection goes
 * on. Not thread-safe: one thread per session.
 */
public final class PmiSession implements PmiConversation {

    /** Longest key-value space name, key and value, as {@code get_maxes} tells (MPICH's limits). */
    public static final int KVS_NAME_MAX = 256;
    /** See {@link #KVS_NAME_MAX}. */
    public static final int KEY_MAX = 64;
    /** See {@link #KVS_NAME_MAX}. */
    public static final int VALUE_MAX = 1024;
    /** Most lines of one {@code mcmd=spawn} block that are read before it is refused anyway. */
    static final int MAX_SPAWN_LINES = 4096;

    /** What a session needs of its job. Called on the session's thread. */
    public interface Job {
        /** @return the number of ranks of the job */
        int size();

        /** @return the job's key-value space name */
        String kvsName();

        /**
         * Stores a rank's pair.
         *
         * @return {@code null}, or why it is refused (such as a duplicate key)
         */
        String put(int rank, String key, String value);

        /** @return the value of a key, {@code null} when no rank put it (or its fence has not passed) */
        String get(String key);

        /** The rank entered the barrier; the caller calls {@link #barrierOut} once every rank has. */
        void barrierIn(int rank);

        /**
         * The rank called {@code MPI_Abort} / {@code PMI_Abort}: the job is to be stopped.
         *
         * @param exitCode the code it gave
         * @param message  its message (spaces as sent), or {@code null}
         */
        void abort(int rank, int exitCode, String message);
    }

    /**
     * What to do after a line.
     *
     * @param reply   the text to send back (lines with their line ends), maybe empty
     * @param close   whether the connection is done (finalize, abort)
     * @param problem a one-line description of bad input, for the log, or {@code null}
     */
    public record Reply(String reply, boolean close, String problem) {
        static Reply of(String reply) {
            return new Reply(reply, false, null);
        }
    }

    private final int rank;
    private final Job job;
    private boolean initialized;
    private boolean inBarrier;
    private boolean finalized;
    private int spawnLines = -1;

    /**
     * @param rank the rank this connection is of
     * @param job  its job
     */
    public PmiSession(int rank, Job job) {
        this.rank = rank;
        this.job = job;
    }

    /** @return the lines that open a connection made to a PMI port, after the client's {@code initack} */
    public String handshake() {
        return PmiLine.format("initack", "rc", "0") + PmiLine.format("set", "size", Integer.toString(job.size()))
                + PmiLine.format("set", "rank", Integer.toString(rank)) + PmiLine.format("set", "debug", "0");
    }

    /** @return whether the rank waits in a barrier */
    @Override
    public boolean inBarrier() {
        return inBarrier;
    }

    /** @return whether the rank finalized */
    @Override
    public boolean finalized() {
        return finalized;
    }

    /** @return the reply that ends the rank's wait in the barrier */
    @Override
    public String barrierOut() {
        inBarrier = false;
        return PmiLine.format("barrier_out", "rc", "0");
    }

    @Override
    public Reply onMessage(String message) {
        return onLine(message);
    }

    /**
     * @param text one line from the rank, without its line end
     * @return what to answer
     */
    public Reply onLine(String text) {
        if (spawnLines >= 0) {
            return spawnLine(text.strip());
        }
        PmiLine line;
        try {
            line = PmiLine.parse(text);
        } catch (IllegalArgumentException e) {
            return error("error", "malformed line: " + e.getMessage());
        }
        if (line.multiLine()) {
            if (!line.command().equals("spawn")) {
                return error(line.command() + "_result", "unknown multi-line command mcmd=" + line.command());
            }
            spawnLines = 0;
            return Reply.of("");
        }
        switch (line.command()) {
            case "init":
                return init(line);
            case "get_maxes":
                return Reply.of(PmiLine.format("maxes", "kvsname_max", Integer.toString(KVS_NAME_MAX),
                        "keylen_max", Integer.toString(KEY_MAX), "vallen_max", Integer.toString(VALUE_MAX), "rc", "0"));
            case "get_appnum":
                return Reply.of(PmiLine.format("appnum", "appnum", "0", "rc", "0"));
            case "get_my_kvsname":
                return Reply.of(PmiLine.format("my_kvsname", "kvsname", job.kvsName(), "rc", "0"));
            case "get_universe_size":
                return Reply.of(PmiLine.format("universe_size", "size", Integer.toString(job.size()), "rc", "0"));
            case "put":
                return put(line);
            case "get":
                return get(line);
            case "barrier_in":
                if (inBarrier) {
                    return error("barrier_out", "barrier_in while already in the barrier");
                }
                inBarrier = true;
                job.barrierIn(rank);
                return Reply.of("");
            case "finalize":
                finalized = true;
                return new Reply(PmiLine.format("finalize_ack", "rc", "0"), true, null);
            case "abort":
                return abort(line);
            default:
                return error(line.command() + "_result", "unknown command cmd=" + PmiLine.shorten(line.command()));
        }
    }

    private Reply init(PmiLine line) {
        if (initialized) {
            return error("response_to_init", "a second init");
        }
        if (!"1".equals(line.get("pmi_version"))) {
            return error("response_to_init", "pmi_version=" + line.get("pmi_version") + ": only PMI-1 is served");
        }
        initialized = true;
        return Reply.of(PmiLine.format("response_to_init", "pmi_version", "1", "pmi_subversion", "1", "rc", "0"));
    }

    private Reply put(PmiLine line) {
        String problem = checkKvs(line);
        String key = line.get("key");
        String value = line.get("value");
        if (problem == null) {
            problem = key == null || value == null ? "put without key= or value="
                    : key.isEmpty() || key.length() > KEY_MAX ? "key of " + key.length() + " characters, not 1.." + KEY_MAX
                    : value.length() > VALUE_MAX ? "value of " + value.length() + " characters, more than " + VALUE_MAX
                    : job.put(rank, key, value);
        }
        return problem != null ? error("put_result", "put " + problem) : Reply.of(PmiLine.format("put_result", "rc", "0"));
    }

    private Reply get(PmiLine line) {
        String problem = checkKvs(line);
        String key = line.get("key");
        if (problem == null && (key == null || key.length() > KEY_MAX)) {
            problem = key == null ? "get without key=" : "key of " + key.length() + " characters, more than " + KEY_MAX;
        }
        if (problem != null) {
            return error("get_result", "get " + problem);
        }
        String value = job.get(key);
        if (value == null) {
            // a normal answer (MPICH asks for optional keys): no problem for the log
            return Reply.of(PmiLine.format("get_result", "rc", "-1", "msg", "key_" + key + "_not_found"));
        }
        return Reply.of(PmiLine.format("get_result", "rc", "0", "value", value));
    }

    private String checkKvs(PmiLine line) {
        String kvs = line.get("kvsname");
        return kvs == null || kvs.equals(job.kvsName()) ? null : "for key-value space " + PmiLine.shorten(kvs)
                + ", not this job's " + job.kvsName();
    }

    private Reply abort(PmiLine line) {
        int code = 1;
        String text = line.get("exitcode");
        if (text != null) {
            try {
                code = Integer.parseInt(text);
            } catch (NumberFormatException e) {
                code = 1;
            }
        }
        String message = line.get("message");
        job.abort(rank, code, message);
        return new Reply("", true, null);
    }

    private Reply spawnLine(String text) {
        if (text.equals("endcmd")) {
            spawnLines = -1;
            return new Reply(PmiLine.format("spawn_result", "rc", "-1", "errmsg", "spawn_is_not_supported"), false,
                    "MPI_Comm_spawn refused: spawning processes is not supported");
        }
        if (++spawnLines > MAX_SPAWN_LINES) {
            return new Reply(PmiLine.format("spawn_result", "rc", "-1", "errmsg", "spawn_is_not_supported"), true,
                    "mcmd=spawn of more than " + MAX_SPAWN_LINES + " lines without endcmd");
        }
        return Reply.of("");
    }

    private static Reply error(String replyCommand, String problem) {
        return new Reply(PmiLine.format(replyCommand, "rc", "-1", "msg", problem.replace(' ', '_')), false, problem);
    }
}
