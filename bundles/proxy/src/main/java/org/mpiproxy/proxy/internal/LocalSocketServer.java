package org.mpiproxy.proxy.internal;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.LongSupplier;

import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;
import org.mpiproxy.api.PrivateDirectories;
import org.mpiproxy.process.UnixIds;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The proxy's local socket (docs/protocol-v2.md 4.2): a Unix stream socket any local user may
 * connect to, whose peer the kernel names ({@code SO_PEERCRED}). One request line per connection
 * (at most {@value #MAX_REQUEST_BYTES} bytes with its newline), one reply line, then the
 * connection is closed; a connection that has not sent its line within
 * {@value #DEADLINE_MILLIS} ms is closed, and beyond {@value #MAX_CONNECTIONS} open at once a
 * new one is closed at once with {@code ERR busy}. One thread of its own serves every connection
 * without blocking (a selector).
 * <p>
 * The socket's directory is made when missing ({@code rwxr-xr-x}, the proxy's user's); one that is
 * a symbolic link, another user's or writable by its group or others is refused, as is a file at
 * the socket's path that is not a socket, or a socket another process listens on. A socket no
 * process listens on (left by a proxy that ended) is removed. The socket is {@code rw-rw-rw-}
 * and removed at {@link #close()}.
 * <p>
 * A connection whose line is {@code RUN 1} (4.4) leaves the selector, in blocking mode, for the
 * {@link Runs} given ({@link #takeRuns}); without one it is answered as any unknown request.
 */
final class LocalSocketServer implements AutoCloseable {

    /** Longest request line, its newline included. */
    static final int MAX_REQUEST_BYTES = 256;
    /** Connections open at once; more are refused busy. */
    static final int MAX_CONNECTIONS = 64;
    /** How long a connection may take to send its line. */
    static final long DEADLINE_MILLIS = 5000;
    /** The reply to a connection beyond {@link #MAX_CONNECTIONS}. */
    static final String BUSY = "ERR busy";
    /** The mode of the socket's directory when the proxy makes it. */
    static final Set<PosixFilePermission> DIRECTORY_MODE = PosixFilePermissions.fromString("rwxr-xr-x");
    /** The socket's mode: every local user may connect. */
    static final Set<PosixFilePermission> SOCKET_MODE = PosixFilePermissions.fromString("rw-rw-rw-");

    private static final Logger LOG = LoggerFactory.getLogger(LocalSocketServer.class);
    private static final int BACKLOG = 128;

    /** Answers a request line. */
    @FunctionalInterface
    interface Handler {
        /**
         * @param line the request, without its line end
         * @param uid  the caller's uid, as the kernel tells it
         * @param gid  the caller's gid, as the kernel tells it
         * @return the reply, without its line end
         */
        String answer(String line, long uid, long gid);
    }

    /** Who is at the other end of a connection. */
    @FunctionalInterface
    interface Peers {
        /**
         * @return {uid, gid}
         * @throws IOException or an unchecked exception, with one line, when it cannot be told
         */
        long[] ids(SocketChannel channel) throws IOException;
    }

    /** Takes a connection whose line was {@code RUN 1}: its frames follow (docs/protocol-v2.md 4.4). */
    @FunctionalInterface
    interface Runs {
        /**
         * Called on the server's thread; must return at once.
         *
         * @param channel the connection, in blocking mode, now the taker's to close
         * @param rest    what the peer sent after the line, in read mode
         * @param uid     the peer's uid, as the kernel tells it
         * @param gid     the peer's gid, as the kernel tells it
         */
        void take(SocketChannel channel, ByteBuffer rest, long uid, long gid);
    }

    /** The kernel's word: {@code SO_PEERCRED}, its names turned into ids by the user database. */
    static final Peers KERNEL = channel -> {
        UnixDomainPrincipal peer = channel.getOption(ExtendedSocketOptions.SO_PEERCRED);
        return new long[] {UnixIds.uid(peer.user().getName()), UnixIds.gid(peer.group().getName())};
    };

    /** One connection until it is closed. */
    private static final class Connection {
        final SocketChannel channel;
        final long deadline;
        final ByteBuffer request = ByteBuffer.allocate(MAX_REQUEST_BYTES);
        long[] ids;
        String unknownPeer;
        ByteBuffer reply;
        /** After {@code RUN 1}: the bytes that followed the line, for the {@link Runs}. */
        ByteBuffer run;

        Connection(SocketChannel channel, long deadline) {
            this.channel = channel;
            this.deadline = deadline;
        }
    }

    private final Path path;
    private final Object fileKey;
    private final ServerSocketChannel server;
    private final Selector selector;
    private final Handler handler;
    private final LongSupplier clockMillis;
    private final Peers peers;
    private final Thread thread;
    private final List<SelectionKey> runsToHand = new ArrayList<>();
    private volatile Runs runs;
    private volatile boolean closed;
    private volatile int open;

    private LocalSocketServer(Path path, Object fileKey, ServerSocketChannel server, Selector selector,
                              Handler handler, LongSupplier clockMillis, Peers peers) {
        this.path = path;
        this.fileKey = fileKey;
        this.server = server;
        this.selector = selector;
        this.handler = handler;
        this.clockMillis = clockMillis;
        this.peers = peers;
        this.thread = new Thread(this::run, "mpiproxy-local-socket");
        thread.setDaemon(true);
    }

    /**
     * As {@link #open(Path, Handler, LongSupplier, Peers)}, the peers named by the kernel.
     */
    static LocalSocketServer open(Path socket, Handler handler, LongSupplier clockMillis) throws IOException {
        return open(socket, handler, clockMillis, KERNEL);
    }

    /**
     * Makes or checks the socket's directory, removes a stale socket, listens and starts serving.
     *
     * @param socket      the socket's path, absolute
     * @param handler     answers each request line
     * @param clockMillis a monotonic clock in milliseconds, for the connections' deadlines
     * @param peers       tells who a connection's peer is
     * @return the running server
     * @throws IOException with one line saying why there is no socket
     */
    static LocalSocketServer open(Path socket, Handler handler, LongSupplier clockMillis, Peers peers)
            throws IOException {
        Path absolute = socket.toAbsolutePath();
        Path directory = absolute.getParent();
        String problem = LocalSocketFiles.directoryProblem(directory);
        if (problem != null) {
            throw new IOException("the directory of the local socket " + absolute + " " + problem);
        }
        PrivateDirectories.ensure(directory, DIRECTORY_MODE, "the directory of the local socket " + absolute);
        LocalSocketFiles.removeStale(absolute);
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        Selector selector = null;
        boolean bound = false;
        try {
            server.bind(UnixDomainSocketAddress.of(absolute), BACKLOG);
            bound = true;
            Files.setPosixFilePermissions(absolute, SOCKET_MODE);
            Object key = Files.readAttributes(absolute, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
            server.configureBlocking(false);
            selector = Selector.open();
            server.register(selector, SelectionKey.OP_ACCEPT);
            LocalSocketServer s = new LocalSocketServer(absolute, key, server, selector, Objects.requireNonNull(handler),
                    Objects.requireNonNull(clockMillis), Objects.requireNonNull(peers));
            s.thread.start();
            return s;
        } catch (IOException | RuntimeException e) {
            server.close();
            if (selector != null) {
                selector.close();
            }
            if (bound) {
                Files.deleteIfExists(absolute);
            }
            throw new IOException("cannot listen on the local socket " + absolute + ": " + e.getMessage(), e);
        }
    }

    /** @return the socket's path */
    Path path() {
        return path;
    }

    /** @return connections open now */
    int connections() {
        return open;
    }

    /** From now on, hands {@code RUN 1} connections to {@code runs}; {@code null}: answers them as unknown. */
    void takeRuns(Runs runs) {
        this.runs = runs;
    }

    /** Checks the connections' deadlines against the clock now (a test's clock moved). */
    void wakeup() {
        selector.wakeup();
    }

    /** Stops serving, closes every connection and removes the socket (when it is still this server's). */
    @Override
    public void close() {
        closed = true;
        selector.wakeup();
        if (Thread.currentThread() != thread) {
            try {
                thread.join(DEADLINE_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        try {
            Object now = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
            if (Objects.equals(now, fileKey)) {
                Files.delete(path);
            }
        } catch (NoSuchFileException e) {
            // removed already
        } catch (IOException e) {
            LOG.warn("cannot remove the local socket {}: {}", path, e.toString());
        }
    }

    private void run() {
        try {
            while (!closed) {
                selector.select(untilNextDeadline());
                long now = clockMillis.getAsLong();
                for (SelectionKey key : selector.selectedKeys()) {
                    if (!key.isValid()) {
                        continue;
                    }
                    if (key.isAcceptable()) {
                        accept(now);
                    } else {
                        serve(key);
                    }
                }
                selector.selectedKeys().clear();
                handRuns();
                expire(clockMillis.getAsLong());
            }
        } catch (IOException | RuntimeException e) {
            if (!closed) {
                LOG.error("the local socket {} stopped serving: {}", path, e.toString());
            }
        } finally {
            for (SelectionKey key : selector.keys()) {
                closeQuietly(key);
            }
            closeQuietly(selector);
            closeQuietly(server);
            open = 0;
        }
    }

    /** @return milliseconds until the nearest deadline by the clock, at least 1; 0 (no limit) without connections */
    private long untilNextDeadline() {
        long now = clockMillis.getAsLong();
        long nearest = Long.MAX_VALUE;
        for (SelectionKey key : selector.keys()) {
            if (key.isValid() && key.attachment() instanceof Connection) {
                nearest = Math.min(nearest, ((Connection) key.attachment()).deadline);
            }
        }
        return nearest == Long.MAX_VALUE ? 0 : Math.max(1, nearest - now);
    }

    private void accept(long now) throws IOException {
        SocketChannel channel;
        while ((channel = server.accept()) != null) {
            channel.configureBlocking(false);
            if (open >= MAX_CONNECTIONS) {
                try {
                    // a fresh socket's buffer always holds this line
                    channel.write(StandardCharsets.UTF_8.encode(BUSY + "\n"));
                } catch (IOException e) {
                    // gone already
                }
                closeQuietly(channel);
                continue;
            }
            Connection c = new Connection(channel, now + DEADLINE_MILLIS);
            try {
                c.ids = peers.ids(channel);
            } catch (IOException | RuntimeException e) {
                c.unknownPeer = e.getMessage();
            }
            channel.register(selector, SelectionKey.OP_READ, c);
            open++;
        }
    }

    private void serve(SelectionKey key) {
        Connection c = (Connection) key.attachment();
        try {
            if (c.reply == null) {
                read(c);
            }
            if (c.run != null) {
                key.interestOps(0);
                runsToHand.add(key);
            } else if (c.reply != null) {
                c.channel.write(c.reply);
                if (c.reply.hasRemaining()) {
                    key.interestOps(SelectionKey.OP_WRITE);
                } else {
                    close(key);
                }
            }
        } catch (IOException e) {
            close(key);
        }
    }

    private void read(Connection c) throws IOException {
        int from = c.request.position();
        int n = c.channel.read(c.request);
        for (int i = from; i < c.request.position(); i++) {
            if (c.request.get(i) == '\n') {
                String answer = answer(c, i);
                if (c.run == null) {
                    c.reply = reply(answer);
                }
                return;
            }
        }
        if (n < 0) {
            c.reply = reply(c.request.position() == 0 ? null : "ERR the request does not end with a newline");
        } else if (!c.request.hasRemaining()) {
            c.reply = reply("ERR the request is longer than " + MAX_REQUEST_BYTES + " bytes");
        }
    }

    private String answer(Connection c, int newline) {
        int end = newline > 0 && c.request.get(newline - 1) == '\r' ? newline - 1 : newline;
        String line;
        try {
            line = StandardCharsets.UTF_8.newDecoder().decode(c.request.duplicate().position(0).limit(end)).toString();
        } catch (CharacterCodingException e) {
            return "ERR the request is not UTF-8";
        }
        if (c.ids == null) {
            return "ERR cannot tell who you are: " + c.unknownPeer;
        }
        Runs taker = runs;
        if (taker != null && line.equals(RunFrames.RUN_LINE)) {
            ByteBuffer rest = c.request.duplicate().position(newline + 1)
                    .limit(c.request.position());
            c.run = ByteBuffer.allocate(rest.remaining()).put(rest).flip();
            return null;
        }
        try {
            return handler.answer(line, c.ids[0], c.ids[1]);
        } catch (RuntimeException e) {
            LOG.warn("the local socket {} failed to answer a request: {}", path, e.toString());
            return "ERR " + e.getMessage();
        }
    }

    /** @return the reply's bytes with one line end, an empty buffer for none */
    private static ByteBuffer reply(String line) {
        if (line == null) {
            return ByteBuffer.allocate(0);
        }
        String one = line.replace('\n', ' ').replace('\r', ' ');
        return StandardCharsets.UTF_8.encode(CharBuffer.wrap(one + "\n"));
    }

    /** Hands the {@code RUN 1} connections of this round to the {@link Runs}, out of the selector. */
    private void handRuns() throws IOException {
        if (runsToHand.isEmpty()) {
            return;
        }
        for (SelectionKey key : runsToHand) {
            open--;
            key.cancel();
        }
        selector.selectNow(); // deregisters them: only then may they block
        Runs taker = runs;
        for (SelectionKey key : runsToHand) {
            Connection c = (Connection) key.attachment();
            try {
                c.channel.configureBlocking(true);
                if (taker == null) {
                    throw new IOException("runs are no longer taken");
                }
                taker.take(c.channel, c.run, c.ids[0], c.ids[1]);
            } catch (IOException | RuntimeException e) {
                LOG.warn("the local socket {} failed to hand over a run: {}", path, e.toString());
                closeQuietly(c.channel);
            }
        }
        runsToHand.clear();
    }

    private void expire(long now) {
        List<SelectionKey> late = new ArrayList<>();
        for (SelectionKey key : selector.keys()) {
            if (key.isValid() && key.attachment() instanceof Connection
                    && ((Connection) key.attachment()).deadline <= now) {
                late.add(key);
            }
        }
        late.forEach(this::close);
    }

    private void close(SelectionKey key) {
        if (key.channel().isOpen()) {
            // counted first: a peer that sees the end sees the count without it
            open--;
            key.cancel();
            closeQuietly(key.channel());
        }
    }

    private static void closeQuietly(SelectionKey key) {
        key.cancel();
        closeQuietly(key.channel());
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception e) {
            // closing: nothing more to do
        }
    }
}
