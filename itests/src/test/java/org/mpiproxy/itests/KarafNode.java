package org.mpiproxy.itests;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One node of a test cluster: the distribution unpacked into its own directory, its proxy on its
 * own loopback address and a free port, its rings in its own directory, SSH and RMI on free
 * ports, short TERMINATE timeouts (unless told otherwise), a stop grace of 2 s; run as {@code bin/karaf server} (exec'd, so stopping the
 * process stops Karaf).
 */
final class KarafNode {

    final String name;
    final Path home;
    final String address;
    final int port;
    final Path ringDirectory;
    private Process karaf;
    /** The node keepers of earlier starts ({@link #stopKaraf}): they may still keep ranks. */
    private final List<Process> earlier = new java.util.ArrayList<>();

    private KarafNode(String name, Path home, String address, int port) {
        this.name = name;
        this.home = home;
        this.address = address;
        this.port = port;
        this.ringDirectory = home.resolve("rings");
    }

    /**
     * Unpacks and configures a node.
     *
     * @param name         the node's name
     * @param distribution the distribution's .tar.gz
     * @param parent       where the node's directory goes
     * @param address      the proxy's loopback address, e.g. 127.0.0.11
     * @return the node, not started
     */
    static KarafNode create(String name, Path distribution, Path parent, String address)
            throws IOException, InterruptedException {
        return create(name, distribution, parent, address, 1);
    }

    /**
     * As {@link #create(String, Path, Path, String)} with a given {@code terminate.timeout.seconds}.
     *
     * @param terminateTimeoutSeconds how long a TERMINATE without STOP waits for a rank's exit
     */
    static KarafNode create(String name, Path distribution, Path parent, String address, int terminateTimeoutSeconds)
            throws IOException, InterruptedException {
        Path home = parent.resolve(name);
        Files.createDirectories(home);
        Process tar = new ProcessBuilder("tar", "-xzf", distribution.toString(), "-C", home.toString(),
                "--strip-components=1").inheritIO().start();
        if (!tar.waitFor(120, TimeUnit.SECONDS) || tar.exitValue() != 0) {
            throw new IOException("tar failed to unpack " + distribution);
        }
        KarafNode node = new KarafNode(name, home, address, Ports.freeUdpPort(address));
        Path etc = home.resolve("etc");
        edit(etc.resolve("org.mpiproxy.transport.udp.cfg"), "address", address);
        edit(etc.resolve("org.mpiproxy.transport.udp.cfg"), "port", Integer.toString(node.port));
        edit(etc.resolve("org.mpiproxy.channel.shm.cfg"), "base.directory", node.ringDirectory.toString());
        // rings smaller than the default: a rank of the tests' long job (about 2 MB of results)
        // then waits on its full ring until rank 0 reads it, so the tests find it running
        edit(etc.resolve("org.mpiproxy.channel.shm.cfg"), "ring.capacity", "262144");
        edit(etc.resolve("org.mpiproxy.proxy.cfg"), "terminate.timeout.seconds", Integer.toString(terminateTimeoutSeconds));
        // v2 requests name the node they are for: hosts name a node by its proxy's address
        edit(etc.resolve("org.mpiproxy.proxy.cfg"), "node.name", address);
        edit(etc.resolve("org.mpiproxy.proxy.cfg"), "stop.grace.seconds", "2");
        // several nodes share this machine: a local socket each, not the default /run/mpiproxy/proxy.sock
        edit(etc.resolve("org.mpiproxy.proxy.cfg"), "local.socket", home.resolve("run/proxy.sock").toString());
        // shipped off; the tests' nodes serve v1 too (the readiness probe, the FreeNOS host's tests)
        edit(etc.resolve("org.mpiproxy.proxy.cfg"), "v1.enabled", "true");
        edit(etc.resolve("org.apache.karaf.shell.cfg"), "sshPort", Integer.toString(Ports.freeTcpPort()));
        edit(etc.resolve("org.apache.karaf.management.cfg"), "rmiRegistryPort", Integer.toString(Ports.freeTcpPort()));
        edit(etc.resolve("org.apache.karaf.management.cfg"), "rmiServerPort", Integer.toString(Ports.freeTcpPort()));
        return node;
    }

    /** Starts Karaf; returns at once (see {@link #awaitProxy}). */
    void start() throws IOException {
        ProcessBuilder builder = new ProcessBuilder(home.resolve("bin/karaf").toString(), "server")
                .directory(home.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(home.resolve("karaf.out").toFile()));
        builder.environment().put("KARAF_EXEC", "exec");
        String spawnNative = System.getProperty(MpiProxyTestSupport.SPAWN_NATIVE, "");
        builder.environment().put("EXTRA_JAVA_OPTS", "-Xms32m -Xmx128m"
                + (spawnNative.isBlank() ? "" : " -Dmpiproxy.spawn.native=" + spawnNative));
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        karaf = builder.start();
    }

    /**
     * Waits until the proxy answers a v1 EXEC it must refuse (world size 1): up and serving,
     * nothing started.
     */
    void awaitProxy(long timeoutSeconds) throws IOException {
        byte[] exec = new byte[12 + 6];
        exec[0] = FreeNosHost.EXEC;
        exec[2] = 1;
        exec[6] = 1;
        System.arraycopy("status".getBytes(StandardCharsets.US_ASCII), 0, exec, 12, 6);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        try (DatagramSocket socket = new DatagramSocket(0)) {
            socket.setSoTimeout(250);
            InetSocketAddress proxy = new InetSocketAddress(InetAddress.getByName(address), port);
            while (System.nanoTime() < deadline) {
                if (!karaf.isAlive()) {
                    throw new IOException(name + ": Karaf exited with " + karaf.exitValue() + ", see " + home
                            + "/karaf.out");
                }
                socket.send(new DatagramPacket(exec, exec.length, proxy));
                try {
                    socket.receive(new DatagramPacket(new byte[64], 64));
                    return;
                } catch (SocketTimeoutException e) {
                    // not up yet: ask again until the deadline
                }
            }
        }
        throw new IOException(name + ": proxy " + address + ":" + port + " did not answer within " + timeoutSeconds
                + " s, see " + home + "/data/log/karaf.log");
    }

    /** @return this node's rank processes (started by its proxy: their channel file is in its ring directory) */
    List<ProcessHandle> ranks() {
        String marker = ringDirectory.toString() + "/";
        byte[] channel = ("MPIPROXY_CHANNEL=" + marker).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        List<ProcessHandle> matching = ProcessHandle.allProcesses()
                .filter(p -> p.info().commandLine().map(c -> c.contains("--slave") && c.contains(marker)).orElse(false)
                        || environmentHas(p.pid(), channel))
                .toList();
        // a rank's children inherit its environment: the rank is the one whose parent is not a rank
        java.util.Set<Long> pids = new java.util.HashSet<>();
        matching.forEach(p -> pids.add(p.pid()));
        // a process that ended while this looked (a rank's short-lived child) has no parent any more: not a rank
        return matching.stream()
                .filter(p -> p.parent().map(parent -> !pids.contains(parent.pid())).orElseGet(p::isAlive))
                .filter(ProcessHandle::isAlive)
                .toList();
    }

    /** @return whether the process's environment holds an entry starting with {@code prefix} (a rank started as given) */
    private static boolean environmentHas(long pid, byte[] prefix) {
        byte[] env;
        try {
            env = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "environ"));
        } catch (IOException | RuntimeException e) {
            return false;
        }
        for (int start = 0; start + prefix.length <= env.length; ) {
            if (java.util.Arrays.equals(env, start, start + prefix.length, prefix, 0, prefix.length)) {
                return true;
            }
            int nul = start;
            while (nul < env.length && env[nul] != 0) {
                nul++;
            }
            start = nul + 1;
        }
        return false;
    }

    /**
     * Stops Karaf and any rank of this node left behind: SIGTERM to the node keeper (which passes
     * it on to Karaf), and once Karaf has ended a second SIGTERM, which makes the keeper stop the
     * ranks it keeps at once; SIGKILL after 60 s.
     */
    void stop() throws InterruptedException {
        List<Process> all = new java.util.ArrayList<>(earlier);
        long jvm = -1;
        if (karaf != null) {
            all.add(karaf);
            try {
                jvm = jvmPid();
            } catch (IOException | RuntimeException e) {
                // not started far enough to write it
            }
        }
        for (Process p : all) {
            p.destroy();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            long karafJvm = p == karaf ? jvm : -1;
            while (p.isAlive() && karafJvm > 0 && ProcessHandle.of(karafJvm).map(ProcessHandle::isAlive).orElse(false)
                    && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            if (p.isAlive() && !p.waitFor(1, TimeUnit.SECONDS)) {
                // Karaf has ended and the keeper keeps its ranks: a second SIGTERM stops them now
                p.destroy();
                if (!p.waitFor(30, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    p.waitFor(10, TimeUnit.SECONDS);
                }
            }
        }
        for (ProcessHandle rank : ranks()) {
            rank.destroyForcibly();
        }
    }

    /**
     * Stops Karaf as an operator does ({@code bin/stop}) and waits until its JVM has ended; the
     * node keeper {@link #start} started stays while it keeps ranks.
     *
     * @return the JVM's pid
     */
    long stopKaraf() throws IOException, InterruptedException {
        long jvm = jvmPid();
        ProcessBuilder builder = new ProcessBuilder(home.resolve("bin/stop").toString()).directory(home.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(home.resolve("stop.out").toFile()));
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        Process stop = builder.start();
        if (!stop.waitFor(60, TimeUnit.SECONDS) || stop.exitValue() != 0) {
            throw new IOException(name + ": bin/stop failed, see " + home.resolve("stop.out"));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (ProcessHandle.of(jvm).map(ProcessHandle::isAlive).orElse(false)) {
            if (System.nanoTime() > deadline) {
                throw new IOException(name + ": Karaf's JVM " + jvm + " did not end after bin/stop");
            }
            Thread.sleep(50);
        }
        earlier.add(karaf);
        karaf = null;
        return jvm;
    }

    /** @return the node's Karaf home (its unpacked distribution) */
    Path home() {
        return home;
    }

    /** @return the value of {@code key} in {@code etc/<cfg>}, {@code null} when it has none */
    String setting(String cfg, String key) throws IOException {
        java.util.Properties properties = new java.util.Properties();
        try (var in = Files.newBufferedReader(home.resolve("etc").resolve(cfg))) {
            properties.load(in);
        }
        return properties.getProperty(key);
    }

    /** @return the pid of Karaf's JVM (its {@code karaf.pid}) */
    long jvmPid() throws IOException {
        return Long.parseLong(Files.readString(home.resolve("karaf.pid")).trim());
    }

    /** @return the node keeper of the current start: the process {@link #start} started */
    ProcessHandle keeper() {
        return karaf.toHandle();
    }

    /**
     * Installs the cluster's v2 key as the node's {@code etc/mpiproxy.key} (mode 0600), before
     * the first start, so the node does not generate its own.
     *
     * @param key a key file
     */
    void useKey(Path key) throws IOException {
        Path target = home.resolve("etc").resolve("mpiproxy.key");
        Files.copy(key, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Files.setPosixFilePermissions(target, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    }

    /**
     * Sets one value in one of the node's {@code etc/*.cfg} files, as an operator's editor would
     * (a running node picks the change up from the file).
     *
     * @param cfg   the file name, e.g. {@code org.mpiproxy.proxy.cfg}
     * @param key   a key the file already has
     * @param value its new value
     */
    void configure(String cfg, String key, String value) throws IOException {
        edit(home.resolve("etc").resolve(cfg), key, value);
    }

    /**
     * Runs one console command through the distribution's {@code bin/client} as the operator
     * generated at first start (the client reads the first user of {@code etc/users.properties}),
     * over the node's SSH port.
     *
     * @return what the command printed (stdout and stderr)
     */
    String console(String command) throws IOException, InterruptedException {
        return client(command, "-r", "3", "-b");
    }

    /** As {@link #console(String)}, logging in as {@code user} with {@code password}, one attempt. */
    String console(String user, String password, String command) throws IOException, InterruptedException {
        return client(command, "-u", user, "-p", password, "-r", "1", "-b");
    }

    private String client(String command, String... options) throws IOException, InterruptedException {
        List<String> line = new java.util.ArrayList<>();
        line.add(home.resolve("bin/client").toString());
        line.addAll(List.of(options));
        ProcessBuilder builder = new ProcessBuilder(line).directory(home.toFile()).redirectErrorStream(true);
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        Process client = builder.start();
        try (var in = client.getOutputStream()) {
            in.write((command + "\n").getBytes(StandardCharsets.UTF_8));
        }
        byte[] out = client.getInputStream().readAllBytes();
        if (!client.waitFor(60, TimeUnit.SECONDS)) {
            client.destroyForcibly();
            throw new IOException("bin/client '" + command + "' did not end");
        }
        return new String(out, StandardCharsets.UTF_8);
    }

    /** @return the node's {@code data/log/karaf.log}, empty while there is none */
    String log() throws IOException {
        Path log = home.resolve("data/log/karaf.log");
        return Files.exists(log) ? Files.readString(log) : "";
    }

    /** Deletes a directory and everything in it; nothing when it does not exist. */
    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (java.util.stream.Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    private static void edit(Path cfg, String key, String value) throws IOException {
        String text = Files.readString(cfg);
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(key) + "\\s*=.*$").matcher(text);
        if (!m.find()) {
            throw new IOException(cfg + " has no key " + key);
        }
        Files.writeString(cfg, m.replaceFirst(Matcher.quoteReplacement(key + " = " + value)));
    }


}
