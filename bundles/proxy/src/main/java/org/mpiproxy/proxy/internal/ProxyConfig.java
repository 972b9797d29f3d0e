package org.mpiproxy.proxy.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Configuration of the proxy ({@value ProxyComponent#PID}): the metatype of every key, with its
 * default; {@link ProxyComponent} checks the values and applies them.
 */
@ObjectClassDefinition(id = ProxyComponent.PID, name = "MPI proxy",
        description = "Launches ranks for MPI hosts and relays their data between UDP and shared memory.")
public @interface ProxyConfig {

    @AttributeDefinition(name = "Log directory",
            description = "Directory for the ranks' output, job-<id>/rank-<r>.out and .err, readable by the proxy's"
                    + " user only (see log.group); empty means ${karaf.data}/mpiproxy/logs. One that exists must be"
                    + " a directory of the proxy's user that neither its group nor others can write, or the proxy"
                    + " does not start.")
    String log_directory() default "";

    @AttributeDefinition(name = "Log retention days",
            description = "Days the ranks' output of a finished job is kept after it was last written; 0 means"
                    + " no age limit. Checked at start, every " + ProxyComponent.LOG_SWEEP_MINUTES + " minutes and when the"
                    + " configuration changes.", min = "0")
    int log_retention_days() default 14;

    @AttributeDefinition(name = "Log retention megabytes",
            description = "Megabytes the ranks' output of all jobs may take; beyond it the oldest output of"
                    + " finished jobs is deleted. 0 means no size limit. A running rank's output is never"
                    + " deleted.", min = "0")
    long log_retention_megabytes() default 512;

    @AttributeDefinition(name = "Hold limit",
            description = "Bytes of SEND data kept per rank while its ring is full; more is dropped.", min = "0")
    long hold_limit_bytes() default 1048576;

    @AttributeDefinition(name = "Terminate timeout",
            description = "Seconds TERMINATE waits for a rank to exit before stopping it.", min = "0")
    int terminate_timeout_seconds() default 30;

    @AttributeDefinition(name = "Stop grace",
            description = "Seconds between SIGTERM and SIGKILL when a rank is stopped.", min = "0")
    int stop_grace_seconds() default 10;

    @AttributeDefinition(name = "Hand-over window",
            description = "Seconds the running v1 jobs of a stopped proxy wait for the next one to take them over"
                    + " (an update of the proxy bundle, a restart of its component); then they are stopped."
                    + " 0 stops them at once. A shutdown of Karaf always stops them.", min = "0")
    int handover_seconds() default 30;

    @AttributeDefinition(name = "Restart window",
            description = "Seconds the ranks of a node run under the node keeper (the distribution's bin/karaf) outlive"
                    + " Karaf's JVM, waiting for the next proxy to take their jobs over (a restart, an upgrade, a"
                    + " crash); then the keeper stops them (SIGTERM, SIGKILL after the stop grace) and the ranks'"
                    + " lifelines end them. 0 ends them with the JVM.", min = "0")
    int restart_survive_seconds() default 120;

    @AttributeDefinition(name = "Abort on failure",
            description = "When a rank of a v1 job exits with a non-zero status or cannot be started, stop the"
                    + " job's other ranks.")
    boolean abort_on_failure() default true;

    @AttributeDefinition(name = "Job timeout",
            description = "Seconds after which every rank of a v1 job is stopped (SIGTERM to its process group,"
                    + " SIGKILL after the stop grace); 0 means no limit.", min = "0")
    int job_timeout_seconds() default 0;

    @AttributeDefinition(name = "Host silence",
            description = "Seconds without any request from a job's host after which the job's ranks are stopped"
                    + " and removed (a host waiting for a RECV reply counts as heard); 0 means never.",
            min = "0")
    int host_silence_seconds() default 300;

    @AttributeDefinition(name = "State directory",
            description = "Directory where the proxy records the rank processes it started, per job, so that"
                    + " after a crash the next start kills them and removes their shared memory;"
                    + " empty means ${karaf.data}/mpiproxy/state. Made rwx------; one that exists must be a"
                    + " directory of the proxy's user that neither its group nor others can write, or the proxy"
                    + " does not start.")
    String state_directory() default "";

    @AttributeDefinition(name = "v1 enabled",
            description = "Serve protocol v1 (FreeNOS, unauthenticated). Turn it off on nodes untrusted hosts can reach.")
    boolean v1_enabled() default true;

    @AttributeDefinition(name = "v2 enabled", description = "Serve protocol v2 (authenticated, reliable).")
    boolean v2_enabled() default true;

    @AttributeDefinition(name = "Node name",
            description = "This node's name; v2 requests must name it (hosts use the host field of their hostfile"
                    + " line). Empty means 127.0.0.1.")
    String node_name() default "";

    @AttributeDefinition(name = "Start-up wait",
            description = "Seconds the proxy, once started, waits for its channel manager and a launcher for core 0"
                    + " before it answers requests without them. Datagrams that arrive meanwhile are dropped"
                    + " and counted (datagrams.before.ready), as if the port were not open yet: an EXEC is"
                    + " never refused only because the node is still booting. A proxy that took over running jobs serves them at"
                    + " once and holds back only EXECs until a launcher for core 0 is bound.", min = "0")
    int startup_wait_seconds() default 60;

    @AttributeDefinition(name = "Launch threads",
            description = "Ranks started at once (a spawn mostly waits for the kernel, so more than the cores"
                    + " overlap); 0 means " + LaunchPool.DEFAULT_THREADS_PER_CORE + " per core.", min = "0")
    int launch_threads() default 0;

    @AttributeDefinition(name = "v2 key files",
            description = "Cluster key files as id:path, comma-separated; the first signs replies. A path alone"
                    + " is key id 1. Empty means ${karaf.etc}/mpiproxy.key.")
    String v2_key_files() default "";

    @AttributeDefinition(name = "Generate v2 key",
            description = "Create the default key file (random 256 bits, mode 0600) when it is missing.")
    boolean v2_key_generate() default true;

    @AttributeDefinition(name = "v2 clock skew", description = "Seconds a v2 timestamp may differ from the clock.",
            min = "0")
    int v2_skew_seconds() default 30;

    @AttributeDefinition(name = "v2 replay cache size",
            description = "Nonces of EXEC, TERMINATE and STATUS requests remembered per key (replays are refused).",
            min = "1")
    int v2_replay_cache_size() default 65536;

    @AttributeDefinition(name = "v2 replay cache share per source",
            description = "Nonces of one source (an IPv4 address, or an IPv6 /64) remembered per key, at most the"
                    + " replay cache size: a source that holds this many within the replay window (2 * skew + 1 s) is"
                    + " refused busy (the host retries after a back-off), so it cannot fill the cache for the others.",
            min = "1")
    int v2_replay_source_share() default V2Settings.DEFAULT_REPLAY_SOURCE_SHARE;

    @AttributeDefinition(name = "v2 credentials",
            description = "Job keys this node keeps of jobs it does not have yet (a user's CREDENTIAL before the"
                    + " job's first EXEC here), each until its credential expires; more are refused busy (the host"
                    + " retries). Jobs the node has keep theirs. Takes effect at the next start.", min = "0")
    int v2_credentials_max() default V2Settings.DEFAULT_CREDENTIALS_MAX;

    @AttributeDefinition(name = "Ranks as root",
            description = "Accept a job credential of uid 0, i.e. run a user's job as root. Jobs started under a"
                    + " cluster key are not concerned (rank.user of the launchers).")
    boolean rank_root_allowed() default false;

    @AttributeDefinition(name = "v2 datagram size", description = "Largest v2 datagram sent or accepted, in bytes.",
            min = "112", max = "65507")
    int v2_datagram_size() default 1448;

    @AttributeDefinition(name = "v2 job linger",
            description = "Seconds a finished v2 job's TERMINATE replies are kept for repeated requests.", min = "0")
    int v2_job_linger_seconds() default 300;

    @AttributeDefinition(name = "v2 maximum message size",
            description = "Largest message, in bytes, a v2 host may send to a rank; a larger one is refused with"
                    + " MPIPROXY_ERR_MESSAGE_TOO_LARGE (201) and nothing of it is stored. 0 means no limit.",
            min = "0")
    long v2_max_message_bytes() default V2Settings.DEFAULT_MAX_MESSAGE_BYTES;

    @AttributeDefinition(name = "Largest staged program",
            description = "Largest program, in bytes, a v2 host may copy to this node (STAGE, mpiproxy run --stage);"
                    + " never more than the free space of the staged directory's file system less 64 MiB. A larger"
                    + " one is refused at its first fragment with MPIPROXY_ERR_MESSAGE_TOO_LARGE (201), the limit in"
                    + " the reply's argument. Fragments are written to disk as they come, never held in memory."
                    + " 0 refuses every program.", min = "0")
    long stage_max_bytes() default StagedPrograms.MAX_FILE_BYTES;

    @AttributeDefinition(name = "Users' staged programs: retention days",
            description = "Days a program a user staged (staged/u<uid>) is kept after it was last staged or run; 0"
                    + " means no age limit. A program a live rank runs is kept; a user's directory left empty is"
                    + " removed. Checked with the log retention. The shared programs are not swept.", min = "0")
    int stage_user_retention_days() default 14;

    @AttributeDefinition(name = "Users' staged programs: megabytes",
            description = "Megabytes the programs of one user may take in staged/u<uid>; beyond it her least"
                    + " recently used ones are deleted (not one a live rank runs). 0 means no size limit.",
            min = "0")
    long stage_user_retention_megabytes() default 0;

    @AttributeDefinition(name = "Ranks of a job",
            description = "Most live ranks of one v2 job on this node (each holds a channel of the ring capacity in"
                    + " shared memory, two output FIFOs and two log files, from its EXEC until its TERMINATE is"
                    + " answered); one more EXEC is refused with MPI_ERR_NO_MEM (39) naming this limit.", min = "1")
    int job_max_ranks() default NodeLimits.DEFAULT_JOB_MAX_RANKS;

    @AttributeDefinition(name = "Ranks of a user",
            description = "Most live ranks of all v2 jobs of one user (the uid of their job credentials) on this"
                    + " node together; one more EXEC is refused with MPI_ERR_NO_MEM (39) naming this limit. Jobs"
                    + " of cluster-key holders are no user's: only job.max.ranks bounds them.", min = "1")
    int user_max_ranks() default NodeLimits.DEFAULT_USER_MAX_RANKS;

    @AttributeDefinition(name = "Environment of a job",
            description = "Most bytes of the common environments one v2 job's launcher sends this node (ENVIRONMENT,"
                    + " mpiproxy run -genvall / --export ALL when it does not fit one EXEC), held in memory while the"
                    + " job's EXECs need them; a larger one is refused with MPIPROXY_ERR_MESSAGE_TOO_LARGE (201) and"
                    + " one line naming this limit. At most 64 jobs' environments are held at once. 0 refuses every"
                    + " environment.", min = "0", max = "16777216")
    long exec_environment_max_bytes() default V2JobEnvironments.DEFAULT_MAX_BYTES;

    @AttributeDefinition(name = "PMI connections of a job",
            description = "Most PMI connections of one job's ranks to this node's PMI server; one more is closed"
                    + " when it names its PMI_ID, with a line in the log.", min = "1")
    int pmi_max_connections_per_job() default org.mpiproxy.protocol.pmi.PmiLimits.DEFAULT_PER_JOB;

    @AttributeDefinition(name = "PMI connections of a uid",
            description = "Most PMI connections of one uid's ranks (all its jobs) to this node's PMI server; one"
                    + " more is closed when it names its PMI_ID, with a line in the log.", min = "1")
    int pmi_max_connections_per_uid() default org.mpiproxy.protocol.pmi.PmiLimits.DEFAULT_PER_UID;

    @AttributeDefinition(name = "PMI idle close",
            description = "Seconds a rank's PMI connection may stay silent (not waiting in a fence) before it is"
                    + " closed; 0 means never: MPI ranks sit idle between fences for hours. A connection that"
                    + " does not name its rank within 10 s is closed whatever this says.", min = "0")
    int pmi_idle_seconds() default 0;

    @AttributeDefinition(name = "Log group",
            description = "Group (name or number) that may read the ranks' output: the log directory becomes"
                    + " rwxr-x--- of that group, and jobs' directories and files rwxr-x--- and rw-r----- of it."
                    + " Empty means the proxy's user alone: rwx------ directories, rw------- files.")
    String log_group() default "";

    @AttributeDefinition(name = "Local socket",
            description = "Unix socket on which local users get job credentials (docs/protocol-v2.md 4.2): mode 0666, in"
                    + " a directory the proxy makes (mode 0755, its own) and refuses when another user owns it or its"
                    + " group or others may write it. Empty: no local socket.")
    String local_socket() default LocalSocketComponent.DEFAULT_SOCKET;

    @AttributeDefinition(name = "Credential lifetime",
            description = "Seconds a job credential issued on the local socket, or for a MUNGE request, is valid, 1.."
                    + CredentialIssuer.MAX_LIFETIME_SECONDS + ".", min = "1", max = "604800")
    int identity_credential_seconds() default (int) CredentialIssuer.DEFAULT_LIFETIME_SECONDS;

    @AttributeDefinition(name = "Topology hand-over",
            description = "Discover the node's hardware topology once with hwloc (lstopo-no-graphics, package"
                    + " hwloc-nox) into ${karaf.data}/mpiproxy/topology/topology.xml and give plain (MPICH) ranks"
                    + " HWLOC_XMLFILE and HWLOC_THISSYSTEM=1, so that MPI_Init loads it instead of discovering it;"
                    + " a rank whose request sets HWLOC_XMLFILE keeps its own. Without hwloc: one line in the log"
                    + " and no variables.")
    boolean topology_handover() default true;

    @AttributeDefinition(name = "Topology age",
            description = "Hours after which the topology is discovered again (at the next plain launch, in the"
                    + " background); it is also after a boot, when the CPUs online change and at every change of"
                    + " this configuration. 0: only then.", min = "0")
    int topology_max_age_hours() default 24;
}
