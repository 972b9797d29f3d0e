package org.mpiproxy.cli;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.JobCredential;
import org.mpiproxy.protocol.NodeIds;

/**
 * Whom the launcher acts as over v2 (docs/protocol-v2.md 4, 4.1, 4.2). A holder of the cluster
 * key signs with it, and may make a job credential itself for any user ({@code --user}); anyone
 * else asks the local proxy's socket for a credential of a job, or where none answers and MUNGE
 * works, the job's first node ({@link MungeCredential}, 4.3), and signs that job's datagrams
 * with its job key, presenting the credential to the nodes first ({@link V2Credential}).
 *
 * @param keySpec    the cluster key file list read, {@code [id:]path[,...]}, or {@code null}: none
 * @param jobId      the job's id
 * @param keys       what signs: the cluster keys, or the job key (key id 0)
 * @param credential the job's credential when {@code keys} is its job key, else {@code null}
 */
record LauncherIdentity(String keySpec, long jobId, ClusterKeys keys, V2Credential credential) {

    /** Environment variable naming the local proxy's socket. */
    static final String SOCKET_ENV = "MPIPROXY_SOCKET";
    /** The local proxy's socket when {@value #SOCKET_ENV} is not set. */
    static final String DEFAULT_SOCKET = "/run/mpiproxy/proxy.sock";
    /** The most the local proxy gets to answer. */
    static final Duration SOCKET_WAIT = Duration.ofSeconds(5);
    /** How long a credential made with {@code --user} is valid. */
    static final Duration USER_CREDENTIAL = Duration.ofSeconds(3600);

    /** The longest reply line read from the socket (an {@code OK} line has 261 bytes). */
    private static final int MAX_REPLY = 1024;
    private static final int HEX_KEY = 64;

    /**
     * Where the cluster key comes from: {@code --key-file}, else {@value V2Control#KEY_FILE_ENV},
     * else the MPI library's defaults that this user can read ({@code ../etc/mpiproxy.key} from the
     * working directory, then {@code ~/.mpiproxy/key}).
     *
     * @param keyFile the option's value, or {@code null}
     * @param env     the environment
     * @return the key file list, {@code [id:]path[,...]}, or {@code null} when there is none
     */
    static String keySpec(Path keyFile, Map<String, String> env) {
        return keySpec(keyFile, env, defaultKeyFiles());
    }

    /** @return the key files looked at by default: {@code ../etc/mpiproxy.key}, {@code ~/.mpiproxy/key} */
    static List<Path> defaultKeyFiles() {
        return defaultKeyFiles(Path.of("").toAbsolutePath(), Path.of(System.getProperty("user.home")));
    }

    /** @return the key files looked at by default from {@code cwd} with home {@code home} */
    static List<Path> defaultKeyFiles(Path cwd, Path home) {
        return List.of(cwd.resolve(Path.of("..", "etc", "mpiproxy.key")), home.resolve(Path.of(".mpiproxy", "key")));
    }

    /** As {@link #keySpec(Path, Map)}, with the default files to look at. */
    static String keySpec(Path keyFile, Map<String, String> env, List<Path> defaults) {
        if (keyFile != null) {
            return keyFile.toAbsolutePath().toString();
        }
        String spec = env.get(V2Control.KEY_FILE_ENV);
        if (spec != null && !spec.isBlank()) {
            return spec;
        }
        for (Path file : defaults) {
            // a key file of the proxy's user, unreadable here: this user holds no cluster key
            if (Files.exists(file, LinkOption.NOFOLLOW_LINKS) && Files.isReadable(file)) {
                return file.toAbsolutePath().normalize().toString();
            }
        }
        return null;
    }

    /** @return the local proxy's socket: {@value #SOCKET_ENV}, else {@value #DEFAULT_SOCKET} */
    static Path socket(Map<String, String> env) {
        String path = env.get(SOCKET_ENV);
        return Path.of(path != null && !path.isBlank() ? path : DEFAULT_SOCKET);
    }

    /**
     * The identity of a new job: the cluster key when one can be read (with {@code user}: a
     * credential it makes for that user), else a credential from the local proxy's socket, else
     * one MUNGE vouches for from the job's first node.
     *
     * @param keyFile {@code --key-file}, or {@code null}
     * @param env     the environment
     * @param user    {@code --user UID:GID}, or {@code null}
     * @param first   the job's first node, asked with MUNGE; {@code null}: none
     * @return the identity
     * @throws IllegalArgumentException in one line, when there is none or a key file is unsafe
     */
    static LauncherIdentity forNewJob(Path keyFile, Map<String, String> env, String user, Placement first) {
        return forNewJob(keyFile, env, user, defaultKeyFiles(), first);
    }

    /** As {@link #forNewJob(Path, Map, String, Placement)}, with the key files to look at by default. */
    static LauncherIdentity forNewJob(Path keyFile, Map<String, String> env, String user, List<Path> defaults,
                                      Placement first) {
        String spec = keySpec(keyFile, env, defaults);
        if (spec == null && user != null) {
            throw new IllegalArgumentException("--user " + user + " makes the job's credential with the cluster key,"
                    + " and no key file was found: give --key-file FILE or set " + V2Control.KEY_FILE_ENV);
        }
        if (spec == null) {
            return fromSocket(socket(env), 0, first);
        }
        ClusterKeys keys = V2Control.keys(spec);
        if (user == null) {
            return new LauncherIdentity(spec, randomJobId(), keys, null);
        }
        long[] ids = parseUser(user);
        return asUser(keys, randomJobId(), ids[0], ids[1], System.currentTimeMillis(), hostName());
    }

    /**
     * The identity to act on an existing job: the cluster key when one can be read, else the
     * job's credential from the local proxy's socket ({@code CREDENTIAL <job id>}), else one MUNGE
     * vouches for from the job's first node.
     *
     * @param keySpec the key file list the job used (its job file), or {@code null}
     * @param keyFile {@code --key-file}, or {@code null}
     * @param env     the environment
     * @param jobId   the job
     * @param first   the job's first node, asked with MUNGE; {@code null}: none
     * @return the identity
     * @throws IllegalArgumentException in one line, when there is none or a key file is unsafe
     */
    static LauncherIdentity forJob(String keySpec, Path keyFile, Map<String, String> env, long jobId,
                                   Placement first) {
        String spec = keySpec != null ? keySpec : keySpec(keyFile, env);
        return spec != null ? new LauncherIdentity(spec, jobId, V2Control.keys(spec), null)
                : fromSocket(socket(env), jobId, first);
    }

    /**
     * A credential from the local proxy's socket, else, when MUNGE works here, from the job's first
     * node (docs/protocol-v2.md 4.3).
     *
     * @param first the job's first node; {@code null}: the socket only
     * @throws IllegalArgumentException in one line saying why neither gave one
     */
    static LauncherIdentity fromSocket(Path socket, long jobId, Placement first) {
        try {
            return fromSocket(socket, jobId);
        } catch (IllegalArgumentException noSocket) {
            if (first == null) {
                throw noSocket;
            }
            try {
                InetSocketAddress node = new InetSocketAddress(first.address(), first.port());
                // the node id every request names: of the address, as the signer's (V2Control.Signer.auth)
                return MungeCredential.ask(node, node.getAddress().getHostAddress(), jobId);
            } catch (IOException e) {
                throw new IllegalArgumentException(noSocket.getMessage() + "; nor did MUNGE: " + e.getMessage());
            }
        }
    }

    /**
     * A credential that a holder of the cluster key makes itself (docs/protocol-v2.md 4.1).
     *
     * @param keys      the cluster keys; the signing one signs the credential
     * @param jobId     the job
     * @param uid       the user the ranks run as
     * @param gid       their group
     * @param nowMillis when it is issued; it expires {@link #USER_CREDENTIAL} later
     * @param hostName  this host's name: the issuer is its node id
     * @return the identity, signing with the credential's job key
     */
    static LauncherIdentity asUser(ClusterKeys keys, long jobId, long uid, long gid, long nowMillis, String hostName) {
        JobCredential credential = new JobCredential(keys.sendKeyId(), uid, gid, jobId, nowMillis,
                nowMillis + USER_CREDENTIAL.toMillis(), NodeIds.of(hostName), new SecureRandom().nextLong());
        return new LauncherIdentity(null, jobId, JobCredential.hostKeys(credential.jobKey(keys)),
                new V2Credential(jobId, credential.encode(keys), credential.jobKey(keys)));
    }

    /**
     * @param text {@code UID:GID}
     * @return uid and gid
     * @throws IllegalArgumentException in one line, when it is not two unsigned 32-bit numbers
     */
    static long[] parseUser(String text) {
        int colon = text.indexOf(':');
        try {
            long uid = Long.parseLong(text.substring(0, Math.max(0, colon)));
            long gid = Long.parseLong(text.substring(colon + 1));
            if (uid >= 0 && uid <= 0xFFFF_FFFFL && gid >= 0 && gid <= 0xFFFF_FFFFL && colon > 0) {
                return new long[] {uid, gid};
            }
        } catch (NumberFormatException e) {
            // said below
        }
        throw new IllegalArgumentException("--user " + text + ": expected UID:GID, two numbers (e.g. 1000:1000)");
    }

    /**
     * Asks the local proxy for a credential: {@code CREDENTIAL}, or {@code CREDENTIAL <job id>}
     * for a job given (docs/protocol-v2.md 4.2).
     *
     * @param socket the socket
     * @param jobId  the job, or 0 for a new one
     * @return the identity, signing with the job key
     * @throws IllegalArgumentException in one line naming the places looked at for a key, when
     *                                  the proxy gives none
     */
    static LauncherIdentity fromSocket(Path socket, long jobId) {
        String why;
        try {
            String reply = ask(socket, jobId == 0 ? "CREDENTIAL" : "CREDENTIAL " + JobRunner.Job.hex(jobId),
                    SOCKET_WAIT);
            why = reply.startsWith("ERR") ? "it answered: " + reply.substring(3).strip() : null;
            if (why == null) {
                LauncherIdentity identity = parseReply(reply);
                if (jobId == 0 || identity.jobId() == jobId) {
                    return identity;
                }
                why = "it answered for job " + JobRunner.Job.hex(identity.jobId());
            }
        } catch (IOException e) {
            why = e.getMessage() == null ? e.toString() : e.getMessage();
        } catch (IllegalArgumentException e) {
            why = "its answer is not understood: " + e.getMessage();
        }
        throw new IllegalArgumentException("no cluster key and no credential: no readable key file (--key-file, $"
                + V2Control.KEY_FILE_ENV + ", ../etc/mpiproxy.key, ~/.mpiproxy/key), and the local proxy's socket "
                + socket + " gave no credential (" + why + "); run where a proxy listens, or set " + SOCKET_ENV);
    }

    /** @return the identity an {@code OK <job id> <credential> <job key>} line gives */
    static LauncherIdentity parseReply(String reply) {
        String[] words = reply.strip().split(" ");
        if (words.length != 4 || !words[0].equals("OK") || words[1].length() != 16
                || words[2].length() != 2 * JobCredential.LENGTH || words[3].length() != HEX_KEY) {
            throw new IllegalArgumentException("expected OK <job id> <credential> <job key>");
        }
        long jobId = HexFormat.fromHexDigitsToLong(words[1]);
        byte[] credential = HexFormat.of().parseHex(words[2]);
        byte[] jobKey = HexFormat.of().parseHex(words[3]);
        if (jobId == 0) {
            throw new IllegalArgumentException("job id 0");
        }
        return new LauncherIdentity(null, jobId, JobCredential.hostKeys(jobKey), new V2Credential(jobId, credential,
                jobKey));
    }

    /**
     * One request line to a Unix socket and its one reply line, within {@code wait} in all.
     *
     * @return the reply, without its line end
     * @throws IOException when the socket cannot be reached or does not answer a line in time
     */
    static String ask(Path socket, String request, Duration wait) throws IOException {
        long deadline = System.nanoTime() + wait.toNanos();
        try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
             Selector selector = Selector.open()) {
            channel.connect(UnixDomainSocketAddress.of(socket));
            channel.configureBlocking(false);
            ByteBuffer out = ByteBuffer.wrap((request + "\n").getBytes(StandardCharsets.UTF_8));
            ByteBuffer in = ByteBuffer.allocate(MAX_REPLY);
            SelectionKey key = channel.register(selector, SelectionKey.OP_WRITE);
            while (true) {
                if (out.hasRemaining()) {
                    channel.write(out);
                    key.interestOps(out.hasRemaining() ? SelectionKey.OP_WRITE : SelectionKey.OP_READ);
                } else {
                    int read = channel.read(in);
                    for (int i = 0; i < in.position(); i++) {
                        if (in.get(i) == '\n') {
                            return new String(in.array(), 0, i, StandardCharsets.UTF_8);
                        }
                    }
                    if (read < 0 || !in.hasRemaining()) {
                        throw new IOException(read < 0 ? "it closed the connection without an answer"
                                : "its answer is longer than " + MAX_REPLY + " bytes");
                    }
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IOException("no answer in " + wait.toSeconds() + " s");
                }
                selector.select(Math.max(1, left / 1_000_000));
                selector.selectedKeys().clear();
            }
        }
    }

    /** @return a random job id, never 0 */
    static long randomJobId() {
        SecureRandom random = new SecureRandom();
        long id = 0;
        while (id == 0) {
            id = random.nextLong();
        }
        return id;
    }

    /** @return this host's name, as its proxy names its node by default */
    static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "localhost";
        }
    }
}
