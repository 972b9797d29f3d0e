package org.mpiproxy.mpi.internal;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.BitSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Properties;
import java.util.function.Function;

import org.mpiproxy.mpi.Mpi;
import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.mpi.RankOutputHandler;
import org.mpiproxy.mpi.internal.engine.Fabric;
import org.mpiproxy.mpi.internal.engine.Link;
import org.mpiproxy.mpi.internal.engine.ShmPairs;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.JobCredential;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2HeaderDescriptor;

/**
 * How a process joins its job, for both APIs ({@code org.mpiproxy.mpi.Mpi} and the {@code mpi}
 * package): from its command line and environment it learns whether it is rank 0 (the host:
 * hostfile or {@code MPIPROXY_HOSTS}, protocol, keys) or a rank (its channel), and opens the
 * transport.
 */
public final class Join {

    /**
     * A process's place in its job.
     *
     * @param transport  how it reaches the others
     * @param rank       its rank
     * @param size       ranks in the job
     * @param args       the program's own arguments
     * @param statusFile where rank 0 writes the exit statuses for the launcher, or {@code null}
     */
    public record Joined(Transport transport, int rank, int size, List<String> args, Path statusFile) {
    }

    /**
     * The world ranks that share this rank's proxy (so its job directory), as the launcher tells
     * them: ranges such as {@code 1-3,7}. Without it every message goes through rank 0.
     */
    public static final String NODE_RANKS_ENV = "MPIPROXY_NODE_RANKS";
    /** Bytes of each ring of a pair of ranks on one node (a power of two). */
    public static final String PAIR_RING_BYTES_ENV = "MPIPROXY_PAIR_RING_BYTES";
    /**
     * The job key rank 0 signs with instead of a cluster key, 64 hexadecimal digits (docs/protocol-v2.md
     * 4.1): {@code mpiproxy run} sets it for a user who holds no cluster key. It wins over the key files.
     */
    public static final String JOB_KEY_ENV = "MPIPROXY_JOB_KEY";
    /** The job's credential that goes with {@value #JOB_KEY_ENV}, 176 hexadecimal digits, presented to the nodes. */
    public static final String CREDENTIAL_ENV = "MPIPROXY_CREDENTIAL";

    private Join() {
    }

    /**
     * The links of a joined process for the message engine of the {@code mpi} package.
     *
     * @param joined the process's place in its job
     * @param env    the environment ({@value #NODE_RANKS_ENV}, {@value #PAIR_RING_BYTES_ENV})
     * @return its fabric
     * @throws MpiException when the job runs over protocol v1, which carries no messages between ranks
     */
    public static Fabric fabric(Joined joined, Function<String, String> env) {
        Transport t = joined.transport();
        if (t instanceof ChannelRankTransport channel) {
            return new RankFabric(channel, joined.rank(), joined.size(),
                    nodeRanks(env.apply(NODE_RANKS_ENV), joined.size()),
                    pairRingBytes(env.apply(PAIR_RING_BYTES_ENV)));
        }
        if (t instanceof V2HostTransport v2) {
            return new HostFabric(v2);
        }
        if (joined.size() == 1) {
            return new Fabric() {
                @Override
                public Link link(int peer) {
                    throw new IllegalArgumentException("a world of one rank has no peer " + peer);
                }

                @Override
                public void listen(int peer) {
                }

                @Override
                public int poll(Link.Sink sink) {
                    return 0;
                }

                @Override
                public void close() {
                }
            };
        }
        throw new MpiException(MpiErrors.ERR_OTHER, "the mpi package needs protocol v2 (" + Mpi.PROTOCOL_ENV
                + "=v1 is set): v1 carries no messages between ranks");
    }

    /**
     * @param text ranges of world ranks, {@code 1-3,7}; {@code null} or blank for none
     * @return the ranks
     * @throws MpiException when the text is not such a list within the world
     */
    public static BitSet nodeRanks(String text, int size) {
        BitSet ranks = new BitSet(size);
        if (text == null || text.isBlank()) {
            return ranks;
        }
        for (String part : text.split(",", -1)) {
            String p = part.strip();
            int dash = p.indexOf('-');
            try {
                int from = Integer.parseInt(dash < 0 ? p : p.substring(0, dash));
                int to = dash < 0 ? from : Integer.parseInt(p.substring(dash + 1));
                if (from < 0 || to < from || to >= size) {
                    throw new NumberFormatException();
                }
                ranks.set(from, to + 1);
            } catch (NumberFormatException e) {
                throw new MpiException(MpiErrors.ERR_ARG, NODE_RANKS_ENV + "='" + text + "': '" + p
                        + "' is not a rank or a range a-b of ranks below " + size);
            }
        }
        return ranks;
    }

    /** @return the ring size of pairs, {@link ShmPairs#DEFAULT_CAPACITY} when not set */
    public static int pairRingBytes(String text) {
        if (text == null || text.isBlank()) {
            return ShmPairs.DEFAULT_CAPACITY;
        }
        try {
            int bytes = Integer.parseInt(text.strip());
            if (bytes >= 4096 && bytes <= (1 << 30) && Integer.bitCount(bytes) == 1) {
                return bytes;
            }
        } catch (NumberFormatException e) {
            // reported below with the variable's name
        }
        throw new MpiException(MpiErrors.ERR_ARG, PAIR_RING_BYTES_ENV + "='" + text
                + "' is not a power of two from 4096 to 1073741824");
    }

    /**
     * The host's default handling of the ranks' output: {@code [rank] line} on this process's
     * stdout and stderr, or into the launcher's pipe ({@code MPIPROXY_OUTPUT_PIPE});
     * {@code MPIPROXY_OUTPUT_TAGS=off} leaves out the {@code [rank]} tag.
     */
    public static RankOutputHandler defaultOutput(Function<String, String> env) {
        boolean tagged = !"off".equals(env.apply(Mpi.OUTPUT_TAGS_ENV));
        RankOutputHandler printing = RankOutputHandler.printing(System.out, System.err, "", tagged);
        String pipe = env.apply(Mpi.OUTPUT_PIPE_ENV);
        return pipe == null || pipe.isBlank() ? printing : new PipeOutput(Path.of(pipe), tagged, printing);
    }

    /**
     * Ends the job's transport at {@code MPI_Finalize} (the host waits for its ranks' exit
     * statuses and writes them for the launcher); nothing for a rank without one.
     */
    public static void finish(Joined joined) throws MpiException {
        if (joined.transport() == null) {
            return;
        }
        int[] statuses = joined.transport().finish();
        if (joined.statusFile() != null) {
            writeStatuses(joined.statusFile(), statuses);
        }
    }

    /** Writes {@code rank status} lines for the launcher, atomically. */
    public static void writeStatuses(Path file, int[] statuses) {
        StringBuilder text = new StringBuilder();
        for (int r = 0; r < statuses.length; r++) {
            text.append(r).append(' ').append(statuses[r]).append('\n');
        }
        try {
            Path partial = file.resolveSibling(file.getFileName() + ".partial");
            Files.writeString(partial, text);
            Files.move(partial, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException | RuntimeException e) {
            System.err.println("mpi: cannot write the exit statuses to " + file + ": " + e);
        }
    }

    /**
     * Joins the job ({@code MPI_Init}): on the host reads the hostfile (or the launcher's
     * environment) and starts or attaches to every rank, on a rank maps its channel.
     *
     * @param args        the program's command line
     * @param env         the environment
     * @param properties  the system properties
     * @param diagnostics where warnings go
     * @param outputs     the host's handling of the ranks' output lines
     * @return this process's place in the job
     * @throws MpiException as {@code Mpi.init}
     */
    public static Joined join(String[] args, Function<String, String> env, Properties properties,
                              PrintStream diagnostics, Function<Function<String, String>, RankOutputHandler> outputs) {
        String hosts = env.apply(Mpi.HOSTS_ENV);
        LaunchArguments started = LaunchArguments.isRankForm(args) ? null : LaunchArguments.fromEnvironment(env, args);
        boolean fromEnvironment = started == null && hosts != null && !LaunchArguments.isRankForm(args);
        LaunchArguments launch = started != null ? started : fromEnvironment ? null : LaunchArguments.parse(args);
        if (launch != null && launch.isRank()) {
            return new Joined(ChannelRankTransport.map(launch.channelFile())
                    .watch(ProxyLifeline.fromEnvironment(env, launch.rank())), launch.rank(), launch.worldSize(),
                    launch.programArgs(), null);
        }
        markInit(env.apply(Mpi.INIT_FILE_ENV), diagnostics);
        List<HostfileEntry> nodes;
        List<String> programArgs;
        if (fromEnvironment) {
            try {
                nodes = Hostfile.parseList(Mpi.HOSTS_ENV, hosts);
            } catch (IllegalArgumentException e) {
                throw new MpiException(MpiErrors.ERR_ARG, e.getMessage(), e);
            }
            programArgs = List.of(args);
        } else {
            try {
                nodes = Hostfile.read(launch.hostfile());
            } catch (IOException e) {
                throw new MpiException(MpiErrors.ERR_IO, "cannot read hostfile " + launch.hostfile() + ": " + e, e);
            } catch (IllegalArgumentException e) {
                throw new MpiException(MpiErrors.ERR_ARG, "hostfile " + e.getMessage(), e);
            }
            programArgs = launch.programArgs();
        }
        String program = env.apply(Mpi.PROGRAM_ENV);
        if (program == null || program.isEmpty()) {
            program = properties.getProperty(Mpi.PROGRAM_PROPERTY);
        }
        if (program == null || program.isEmpty()) {
            throw new MpiException(MpiErrors.ERR_ARG, "unknown program name: set " + Mpi.PROGRAM_ENV
                    + " or the system property " + Mpi.PROGRAM_PROPERTY);
        }
        Duration timeout = timeout(env.apply(Mpi.TIMEOUT_ENV));
        int port = hostPort(env.apply(Mpi.HOST_PORT_ENV));
        String protocol = env.apply(Mpi.PROTOCOL_ENV);
        Joined mpi;
        if (protocol == null || protocol.isBlank() || protocol.strip().equals("v2")) {
            if (nodes.isEmpty()) {
                mpi = new Joined(UdpHostTransport.start(nodes, program, programArgs, timeout, diagnostics, port), 0, 1,
                        programArgs, null);
            } else {
                byte[] credential = credential(env);
                V2HostTransport transport = V2HostTransport.start(nodes, program, programArgs, hostKeys(env),
                        datagramSize(env.apply(Mpi.DATAGRAM_SIZE_ENV)), timeout,
                        deadAfter(env.apply(Mpi.DEAD_AFTER_ENV), timeout), diagnostics, outputs.apply(env),
                        jobId(env.apply(Mpi.JOB_ID_ENV), credential), port, System::currentTimeMillis, credential);
                transport.restartWait(milliseconds(Mpi.RESTART_WAIT_ENV, env.apply(Mpi.RESTART_WAIT_ENV)));
                mpi = new Joined(transport, 0, transport.size(), programArgs, null);
            }
        } else if (protocol.strip().equals("v1")) {
            UdpHostTransport transport = UdpHostTransport.start(nodes, program, programArgs, timeout, diagnostics,
                    port);
            mpi = new Joined(transport, 0, transport.size(), programArgs, null);
        } else {
            throw new MpiException(MpiErrors.ERR_ARG, Mpi.PROTOCOL_ENV + "='" + protocol + "' is neither v1 nor v2");
        }
        String statusFile = env.apply(Mpi.STATUS_FILE_ENV);
        return statusFile == null || statusFile.isBlank() ? mpi
                : new Joined(mpi.transport(), mpi.rank(), mpi.size(), mpi.args(), Path.of(statusFile));
    }

    /** Tells the launcher that rank 0 reached {@link #init} (see {@value #Mpi.INIT_FILE_ENV}). */
    private static void markInit(String file, PrintStream diagnostics) {
        if (file == null || file.isBlank()) {
            return;
        }
        try {
            Files.writeString(Path.of(file), "init\n");
        } catch (IOException | RuntimeException e) {
            diagnostics.println("mpi: cannot write " + Mpi.INIT_FILE_ENV + "=" + file + ": " + e);
        }
    }

    public static long jobId(String text) {
        if (text == null || text.isBlank()) {
            return 0;
        }
        try {
            long id = Long.parseUnsignedLong(text.strip(), 16);
            if (id != 0 && text.strip().length() <= 16) {
                return id;
            }
        } catch (NumberFormatException e) {
            // reported below with the variable's name
        }
        throw new MpiException(MpiErrors.ERR_ARG, Mpi.JOB_ID_ENV + "='" + text + "' is not a job id of 1 to 16"
                + " hexadecimal digits, not 0");
    }

    public static int hostPort(String text) {
        if (text == null || text.isBlank()) {
            return 0;
        }
        try {
            int port = Integer.parseInt(text.strip());
            if (port >= 0 && port <= 65535) {
                return port;
            }
        } catch (NumberFormatException e) {
            // reported below with the variable's name
        }
        throw new MpiException(MpiErrors.ERR_ARG, Mpi.HOST_PORT_ENV + "='" + text + "' is not a port number 0-65535");
    }

    /**
     * @param text      {@value Mpi#JOB_ID_ENV}
     * @param credential the job's credential, or {@code null}
     * @return the job id: the credential's (which {@value Mpi#JOB_ID_ENV} must name too, when set),
     *         else as {@link #jobId(String)}
     * @throws MpiException when the two name different jobs
     */
    public static long jobId(String text, byte[] credential) {
        long id = jobId(text);
        if (credential == null) {
            return id;
        }
        long own = ByteBuffer.wrap(credential).order(ByteOrder.LITTLE_ENDIAN).getLong(16);
        if (id != 0 && id != own) {
            throw new MpiException(MpiErrors.ERR_ARG, Mpi.JOB_ID_ENV + "=" + text.strip() + " is not the job of "
                    + CREDENTIAL_ENV + " (" + HexFormat.of().toHexDigits(own) + ")");
        }
        return own;
    }

    /**
     * @param env the environment
     * @return the job's credential ({@value #CREDENTIAL_ENV}) when {@value #JOB_KEY_ENV} is set, else {@code null}
     * @throws MpiException when it is missing or not {@value JobCredential#LENGTH} bytes in hexadecimal
     */
    public static byte[] credential(Function<String, String> env) {
        String jobKey = env.apply(JOB_KEY_ENV);
        if (jobKey == null || jobKey.isBlank()) {
            return null;
        }
        String text = env.apply(CREDENTIAL_ENV);
        if (text == null || text.isBlank()) {
            throw new MpiException(MpiErrors.ERR_ARG, JOB_KEY_ENV + " is set without " + CREDENTIAL_ENV
                    + ", the job's credential that goes with it");
        }
        byte[] credential = hex(CREDENTIAL_ENV, text, JobCredential.LENGTH);
        if (ByteBuffer.wrap(credential).order(ByteOrder.LITTLE_ENDIAN).getLong(16) == 0) {
            throw new MpiException(MpiErrors.ERR_ARG, CREDENTIAL_ENV + " names job 0: it is no credential");
        }
        return credential;
    }

    /** @return {@code bytes} bytes from their hexadecimal digits, or an error naming the variable (not its value) */
    private static byte[] hex(String name, String text, int bytes) {
        String digits = text.strip();
        if (digits.length() == 2 * bytes) {
            try {
                return HexFormat.of().parseHex(digits);
            } catch (IllegalArgumentException e) {
                // reported below with the variable's name
            }
        }
        throw new MpiException(MpiErrors.ERR_ARG, name + " is not " + 2 * bytes + " hexadecimal digits");
    }

    /**
     * The keys rank 0 signs with: the job key of {@value #JOB_KEY_ENV} when it is set (key id 0),
     * else the cluster keys of {@value Mpi#KEY_FILE_ENV}, {@code ../etc/mpiproxy.key} or {@code ~/.mpiproxy/key}.
     *
     * @param env the environment
     * @return the keys
     * @throws MpiException when there are none or they are unusable
     */
    public static ClusterKeys hostKeys(Function<String, String> env) {
        String jobKey = env.apply(JOB_KEY_ENV);
        if (jobKey != null && !jobKey.isBlank()) {
            return ClusterKeys.ofJobKey(hex(JOB_KEY_ENV, jobKey, ClusterKeys.MIN_KEY_BYTES));
        }
        String spec = env.apply(Mpi.KEY_FILE_ENV);
        Path base = Path.of("").toAbsolutePath();
        if (spec == null || spec.isBlank()) {
            Path home = Path.of(System.getProperty("user.home"), ".mpiproxy", "key");
            if (Files.exists(Mpi.DEFAULT_KEY_FILE, LinkOption.NOFOLLOW_LINKS)) {
                spec = Mpi.DEFAULT_KEY_FILE.toString();
            } else if (Files.exists(home, LinkOption.NOFOLLOW_LINKS)) {
                spec = home.toString();
            } else {
                throw new MpiException(MpiErrors.ERR_ARG, "no v2 key file: set " + Mpi.KEY_FILE_ENV
                        + " (or " + Mpi.PROTOCOL_ENV + "=v1); looked for " + Mpi.DEFAULT_KEY_FILE + " and " + home);
            }
        }
        try {
            // a weak key is refused here as the nodes refuse it
            return ClusterKeys.loadStrong(ClusterKeys.parseFileList(spec, base));
        } catch (IllegalArgumentException e) {
            throw new MpiException(MpiErrors.ERR_ARG, e.getMessage(), e);
        }
    }

    public static int datagramSize(String text) {
        if (text == null || text.isBlank()) {
            return V2HeaderDescriptor.DEFAULT_DATAGRAM_LENGTH;
        }
        try {
            int size = Integer.parseInt(text.strip());
            if (size >= V2HeaderDescriptor.MIN_DATAGRAM_LENGTH + 8 && size <= V2HeaderDescriptor.MAX_DATAGRAM_LENGTH) {
                return size;
            }
        } catch (NumberFormatException e) {
            // reported below with the variable's name
        }
        throw new MpiException(MpiErrors.ERR_ARG, Mpi.DATAGRAM_SIZE_ENV + "='" + text + "' is not in "
                + (V2HeaderDescriptor.MIN_DATAGRAM_LENGTH + 8) + ".." + V2HeaderDescriptor.MAX_DATAGRAM_LENGTH);
    }

    public static Duration deadAfter(String text, Duration timeout) {
        if (text == null || text.isBlank()) {
            // a live proxy answers the probes of a silent node at once: seconds tell a dead node
            return timeout.isZero() || timeout.compareTo(V2HostTransport.DEFAULT_DEAD_AFTER) < 0 ? timeout
                    : V2HostTransport.DEFAULT_DEAD_AFTER;
        }
        try {
            long millis = Long.parseLong(text.strip());
            if (millis >= 0 && millis <= 1_000_000_000_000L) {
                return Duration.ofMillis(millis);
            }
        } catch (NumberFormatException e) {
            // reported below with the variable's name
        }
        throw new MpiException(MpiErrors.ERR_ARG, Mpi.DEAD_AFTER_ENV + "='" + text
                + "' is not a number of milliseconds >= 0");
    }

    /**
     * @param name the variable, for the message
     * @param text its value; unset or blank is 0
     * @return the milliseconds it gives
     * @throws MpiException when it is not a number of milliseconds >= 0
     */
    static Duration milliseconds(String name, String text) {
        if (text == null || text.isBlank()) {
            return Duration.ZERO;
        }
        try {
            long millis = Long.parseLong(text.strip());
            if (millis >= 0 && millis <= 1_000_000_000_000L) {
                return Duration.ofMillis(millis);
            }
        } catch (NumberFormatException e) {
            // reported below with the variable's name
        }
        throw new MpiException(MpiErrors.ERR_ARG, name + "='" + text + "' is not a number of milliseconds >= 0");
    }

    public static Duration timeout(String text) {
        if (text == null || text.isBlank()) {
            return Mpi.DEFAULT_TIMEOUT;
        }
        try {
            long seconds = Long.parseLong(text.strip());
            if (seconds >= 0 && seconds <= 1_000_000_000L) {
                return Duration.ofSeconds(seconds);
            }
        } catch (NumberFormatException e) {
            // reported below with the variable's name
        }
        throw new MpiException(MpiErrors.ERR_ARG, Mpi.TIMEOUT_ENV + "='" + text + "' is not a number of seconds >= 0");
    }
}
