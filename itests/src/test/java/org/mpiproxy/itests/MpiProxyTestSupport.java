package org.mpiproxy.itests;

import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.fail;
import static org.ops4j.pax.exam.CoreOptions.systemProperty;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.configureConsole;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.editConfigurationFilePut;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.karafDistributionConfiguration;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.keepRuntimeFolder;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.logLevel;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import javax.inject.Inject;

import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.api.console.SessionFactory;
import org.junit.Before;
import org.junit.Rule;
import org.junit.runner.RunWith;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.ProxyStatus;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.karaf.options.LogLevelOption.LogLevel;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
import org.osgi.framework.Filter;
import org.osgi.framework.FrameworkUtil;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.service.component.runtime.ServiceComponentRuntime;
import org.osgi.service.component.runtime.dto.ComponentConfigurationDTO;
import org.osgi.service.component.runtime.dto.ComponentDescriptionDTO;
import org.osgi.util.tracker.ServiceTracker;

/**
 * Base of the integration tests: boots the Karaf distribution (one runtime per test class)
 * with the proxy on private ports and directories, and offers what tests need inside it.
 * <p>
 * Test JVM side ({@link #config()}): free ports for SSH, RMI and HTTP, all on 127.0.0.1; a free
 * UDP port for the proxy ({@code etc/org.mpiproxy.transport.udp.cfg}); the channel files under
 * {@code target/} instead of {@code /dev/shm}. Subclasses add options with
 * {@code OptionUtils.combine(super.config(), ...)}.
 * <p>
 * Container side (the test methods): {@link #udpPort()}, {@link #openHost()}, {@link #send},
 * {@link #receive}, {@link #jobs()}, {@link #executeCommand}, {@link #awaitService},
 * {@link #components} and {@link #awaitCondition}. A test that plays a host:
 * <pre>
 * try (DatagramChannel host = openHost()) {
 *     send(host, execDatagram);                      // little-endian v1 header + payload
 *     ByteBuffer reply = receive(host, TIMEOUT);
 *     awaitCondition(() -&gt; !jobs().isEmpty(), TIMEOUT, () -&gt; "jobs " + jobs());
 * }
 * </pre>
 * <p>
 * {@code -Dmpiproxy.itest.keep=true} keeps each runtime folder under {@code target/exam/}
 * (read its {@code data/log/karaf.log} when Pax Exam reports "Container never came up").
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public abstract class MpiProxyTestSupport {

    /** Symbolic names of the bundles the {@code mpiproxy} feature installs in a shell-enabled Karaf. */
    protected static final List<String> FEATURE_BUNDLES = List.of(
            "lz4-java", "org.mpiproxy.api", "org.mpiproxy.protocol", "org.mpiproxy.channel.shm",
            "org.mpiproxy.transport.udp", "org.mpiproxy.process", "org.mpiproxy.launcher.local", "org.mpiproxy.launcher.core",
            "org.mpiproxy.proxy", "org.mpiproxy.mpi", "org.mpiproxy.shell");

    /** Bound of every wait: services, components, commands, datagrams. */
    protected static final Duration TIMEOUT = Duration.ofSeconds(60);

    /** System properties handed from the test JVM to Karaf. */
    private static final String UDP_PORT = "mpiproxy.itest.udp.port";
    private static final String SSH_PORT = "mpiproxy.itest.ssh.port";
    private static final String CHANNEL_DIRECTORY = "mpiproxy.itest.channel.directory";
    private static final String FILE_MODES = "mpiproxy.itest.file.modes";
    private static final String TARGET = "mpiproxy.itest.target";
    private static final String OPERATOR_PASSWORD = "mpiproxy.itest.operator.password";
    /** Set (true or false) to choose how the proxy spawns ranks; unset keeps the product's default. */
    static final String SPAWN_NATIVE = "mpiproxy.itest.spawn.native";

    private static final String LOCALHOST = "127.0.0.1";

    /** Set once per runtime, after the archive's file modes are restored. */
    private static volatile boolean fileModesRestored;

    @Inject
    protected BundleContext bundleContext;

    /** A failed test leaves its threads and the log's tail in {@code target/itest-failures}. */
    @Rule
    public final FailureReport failureReport = new FailureReport(
            Paths.get(System.getProperty(TARGET, "target"), "itest-failures"));

    /**
     * Options of the runtime under test. Runs in the test JVM, before Karaf exists.
     *
     * @return the Pax Exam options
     * @throws IOException when the distribution archive cannot be read
     */
    @Configuration
    public Option[] config() throws IOException {
        Path distribution = Paths.get(requiredProperty("mpiproxy.itest.distribution"));
        Path target = Paths.get(requiredProperty("mpiproxy.itest.target"));
        String localRepository = requiredProperty("mpiproxy.itest.localRepository");
        String examRepository = requiredProperty("mpiproxy.itest.examRepository");
        boolean keep = Boolean.getBoolean("mpiproxy.itest.keep");

        int sshPort = Ports.freeTcpPort();
        int rmiRegistryPort = Ports.freeTcpPort();
        int rmiServerPort = Ports.freeTcpPort();
        int httpPort = Ports.freeTcpPort();
        int udpPort = Ports.freeUdpPort(LOCALHOST);
        Path channels = target.resolve("itest-channels").resolve(UUID.randomUUID().toString());
        String operatorPassword = UUID.randomUUID().toString();
        Files.createDirectories(channels);

        List<Option> options = new ArrayList<>(List.of(
                karafDistributionConfiguration()
                        .frameworkUrl(distribution.toUri().toString())
                        .karafVersion("4.4.10")
                        .name("MPI Proxy")
                        .unpackDirectory(target.resolve("exam").toFile())
                        .useDeployFolder(false),
                configureConsole().ignoreLocalConsole(),
                logLevel(LogLevel.INFO),

                // Pax Exam's own bundles come from the build's repositories only
                editConfigurationFilePut("etc/org.ops4j.pax.url.mvn.cfg",
                        "org.ops4j.pax.url.mvn.localRepository", localRepository),
                editConfigurationFilePut("etc/org.ops4j.pax.url.mvn.cfg",
                        "org.ops4j.pax.url.mvn.repositories",
                        new File(examRepository).toURI() + "@id=exam"),

                editConfigurationFilePut("etc/org.apache.karaf.shell.cfg", "sshHost", LOCALHOST),
                editConfigurationFilePut("etc/org.apache.karaf.shell.cfg", "sshPort", Integer.toString(sshPort)),
                editConfigurationFilePut("etc/org.apache.karaf.management.cfg", "rmiRegistryHost", LOCALHOST),
                editConfigurationFilePut("etc/org.apache.karaf.management.cfg",
                        "rmiRegistryPort", Integer.toString(rmiRegistryPort)),
                editConfigurationFilePut("etc/org.apache.karaf.management.cfg", "rmiServerHost", LOCALHOST),
                editConfigurationFilePut("etc/org.apache.karaf.management.cfg",
                        "rmiServerPort", Integer.toString(rmiServerPort)),
                editConfigurationFilePut("etc/org.ops4j.pax.web.cfg", "org.osgi.service.http.port", Integer.toString(httpPort)),
                editConfigurationFilePut("etc/org.ops4j.pax.web.cfg", "org.ops4j.pax.web.listening.addresses", LOCALHOST),

                // the distribution ships no user: the runtime's operator gets a password of this run
                editConfigurationFilePut("etc/users.properties", "karaf", operatorPassword + ",_g_:admingroup"),
                systemProperty(OPERATOR_PASSWORD).value(operatorPassword),

                // shipped off; the tests speak v1 as FreeNOS hosts do
                editConfigurationFilePut("etc/org.mpiproxy.proxy.cfg", "v1.enabled", "true"),
                // a local socket of this run's own, not the default /run/mpiproxy/proxy.sock (short: at most 107 bytes)
                editConfigurationFilePut("etc/org.mpiproxy.proxy.cfg", "local.socket",
                        Files.createTempDirectory("mpiproxy-").resolve("proxy.sock").toString()),
                editConfigurationFilePut("etc/org.mpiproxy.transport.udp.cfg", "address", LOCALHOST),
                editConfigurationFilePut("etc/org.mpiproxy.transport.udp.cfg", "port", Integer.toString(udpPort)),
                editConfigurationFilePut("etc/org.mpiproxy.channel.shm.cfg", "base.directory", channels.toString()),

                systemProperty(UDP_PORT).value(Integer.toString(udpPort)),
                systemProperty(SSH_PORT).value(Integer.toString(sshPort)),
                systemProperty(CHANNEL_DIRECTORY).value(channels.toString()),
                systemProperty(FILE_MODES).value(programModes(distribution)),
                systemProperty(TARGET).value(target.toString())));
        String spawnNative = System.getProperty(SPAWN_NATIVE, "");
        if (!spawnNative.isBlank()) {
            options.add(systemProperty("mpiproxy.spawn.native").value(spawnNative));
        }
        if (keep) {
            options.add(keepRuntimeFolder());
        }
        return options.toArray(new Option[0]);
    }

    /**
     * Gives the programs the file modes they have in the archive (Pax Exam's unpacking drops
     * them; {@code tar -x} keeps them). Runs in Karaf before each test, acts once per runtime.
     *
     * @throws IOException when a mode cannot be set
     */
    @Before
    public void restoreArchiveFileModes() throws IOException {
        if (fileModesRestored) {
            return;
        }
        String modes = System.getProperty(FILE_MODES, "");
        for (String entry : modes.split(",")) {
            if (entry.isEmpty()) {
                continue;
            }
            int eq = entry.lastIndexOf('=');
            Path file = karafHome().resolve(entry.substring(0, eq));
            Files.setPosixFilePermissions(file, permissions(Integer.parseInt(entry.substring(eq + 1), 8)));
        }
        fileModesRestored = true;
    }

    // ---------------------------------------------------------------- container side

    /** @return the UDP port the proxy is configured to listen on (127.0.0.1) */
    protected static int udpPort() {
        return Integer.getInteger(UDP_PORT);
    }

    /** @return the password of the runtime's console and JMX user {@code karaf} */
    protected static String operatorPassword() {
        return System.getProperty(OPERATOR_PASSWORD);
    }

    /** @return the SSH port of the runtime (127.0.0.1) */
    protected static int sshPort() {
        return Integer.getInteger(SSH_PORT);
    }

    /** @return where the proxy is configured to receive datagrams */
    protected static InetSocketAddress proxyAddress() {
        return new InetSocketAddress(LOCALHOST, udpPort());
    }

    /** @return the directory under which the proxy creates job directories and channel files */
    protected static Path channelDirectory() {
        return Paths.get(System.getProperty(CHANNEL_DIRECTORY));
    }

    /**
     * @param jobId a job id
     * @return the job's directory below {@link #channelDirectory()}: {@code job-<uid>-<16 hex>}, where uid
     *         is the proxy's, which is this process's (the test runs inside the proxy's Karaf)
     */
    protected static Path jobDirectory(long jobId) {
        try {
            long uid = ((Number) Files.getAttribute(Paths.get("/proc/self"), "unix:uid")).longValue();
            return channelDirectory().resolve(String.format("job-%d-%016x", uid, jobId));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return the runtime's {@code karaf.home} */
    protected static Path karafHome() {
        return Paths.get(System.getProperty("karaf.home"));
    }

    /** @return the runtime's {@code programs/} directory */
    protected static Path programsDirectory() {
        return karafHome().resolve("programs");
    }

    /**
     * Opens a UDP socket that plays a host: bound to 127.0.0.1 on a free port, non-blocking;
     * write with {@link #send}, read with {@link #receive}. The caller closes it.
     *
     * @return the channel
     * @throws IOException when no socket can be opened
     */
    protected static DatagramChannel openHost() throws IOException {
        DatagramChannel channel = DatagramChannel.open();
        channel.bind(new InetSocketAddress(LOCALHOST, 0));
        channel.configureBlocking(false);
        return channel;
    }

    /**
     * Sends one datagram to the proxy.
     *
     * @param host     a channel from {@link #openHost()}
     * @param datagram the bytes between position and limit
     * @throws IOException    on socket errors
     * @throws AssertionError when the socket buffer had no room for it
     */
    protected static void send(DatagramChannel host, ByteBuffer datagram) throws IOException {
        int length = datagram.remaining();
        if (host.send(datagram, proxyAddress()) != length) {
            throw new AssertionError("datagram of " + length + " bytes not sent: socket buffer full");
        }
    }

    /**
     * Waits for one datagram.
     *
     * @param host    a channel from {@link #openHost()}
     * @param timeout how long to wait
     * @return the datagram, flipped (position 0, limit its length), little-endian
     * @throws IOException    on socket errors
     * @throws AssertionError when nothing arrives in time
     */
    protected static ByteBuffer receive(DatagramChannel host, Duration timeout) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(65536).order(ByteOrder.LITTLE_ENDIAN);
        long deadline = System.nanoTime() + timeout.toNanos();
        try (Selector selector = Selector.open()) {
            host.register(selector, SelectionKey.OP_READ);
            while (true) {
                if (host.receive(buffer) != null) {
                    return buffer.flip();
                }
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (left <= 0) {
                    throw new AssertionError("no datagram within " + timeout + " on " + host.getLocalAddress());
                }
                selector.select(left);
                selector.selectedKeys().clear();
            }
        }
    }

    /**
     * @return the proxy's jobs, as the {@link ProxyStatus} service reports them
     */
    protected List<JobInfo> jobs() {
        return awaitService(ProxyStatus.class, null).jobs();
    }

    /**
     * Runs a Karaf shell command as the console would, without ACL checks.
     *
     * @param command the command line, e.g. {@code "mpi:jobs --no-format"}
     * @return what the command printed (stdout and stderr) followed by its result, if any
     * @throws Exception what the command threw, or a timeout after {@link #TIMEOUT}
     */
    protected String executeCommand(String command) throws Exception {
        SessionFactory sessionFactory = awaitService(SessionFactory.class, null);
        ByteArrayOutputStream output = new ByteArrayOutputStream();
        PrintStream print = new PrintStream(output, true, StandardCharsets.UTF_8);
        ExecutorService executor = Executors.newSingleThreadExecutor();
        try (Session session = sessionFactory.create(new ByteArrayInputStream(new byte[0]), print, print)) {
            Future<Object> result = executor.submit(() -> session.execute(command));
            Object value;
            try {
                value = result.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
            } catch (TimeoutException e) {
                result.cancel(true);
                throw new AssertionError("'" + command + "' did not finish within " + TIMEOUT
                        + "; output so far:\n" + output.toString(StandardCharsets.UTF_8), e);
            }
            print.flush();
            String text = output.toString(StandardCharsets.UTF_8);
            return value == null ? text : text + value;
        } finally {
            executor.shutdownNow();
        }
    }

    /**
     * @param bsn a bundle symbolic name
     * @return the installed bundle
     * @throws AssertionError when there is none
     */
    protected Bundle bundle(String bsn) {
        for (Bundle bundle : bundleContext.getBundles()) {
            if (bsn.equals(bundle.getSymbolicName())) {
                return bundle;
            }
        }
        throw new AssertionError("no bundle " + bsn + " installed; bundles: " + bundleNames());
    }

    /**
     * Waits for a service.
     *
     * @param type   the service interface
     * @param filter an LDAP filter on its properties, or {@code null}
     * @param <T>    the service type
     * @return the service
     * @throws AssertionError when none appears within {@link #TIMEOUT}
     */
    protected <T> T awaitService(Class<T> type, String filter) {
        String objectClass = "(" + Constants.OBJECTCLASS + "=" + type.getName() + ")";
        Filter osgiFilter;
        try {
            osgiFilter = FrameworkUtil.createFilter(filter == null ? objectClass : "(&" + objectClass + filter + ")");
        } catch (InvalidSyntaxException e) {
            throw new IllegalArgumentException("filter=" + filter, e);
        }
        ServiceTracker<T, T> tracker = new ServiceTracker<>(bundleContext, osgiFilter, null);
        tracker.open(true);
        try {
            T service = tracker.waitForService(TIMEOUT.toMillis());
            assertNotNull("no service " + osgiFilter + " within " + TIMEOUT, service);
            return service;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted waiting for " + osgiFilter, e);
        } finally {
            tracker.close();
        }
    }

    /**
     * @param bundle a bundle with DS components
     * @return every configuration of every component the bundle declares, by component name
     *         (a component without configuration maps to an empty list)
     */
    protected Map<String, List<ComponentConfigurationDTO>> components(Bundle bundle) {
        ServiceComponentRuntime scr = awaitService(ServiceComponentRuntime.class, null);
        return scr.getComponentDescriptionDTOs(bundle).stream().collect(Collectors.toMap(
                description -> description.name,
                description -> List.copyOf(scr.getComponentConfigurationDTOs(description))));
    }

    /**
     * @param bundle a bundle with DS components
     * @return the component descriptions the bundle declares
     */
    protected List<ComponentDescriptionDTO> componentDescriptions(Bundle bundle) {
        return List.copyOf(awaitService(ServiceComponentRuntime.class, null).getComponentDescriptionDTOs(bundle));
    }

    /**
     * Waits, re-checking every 10 ms, until {@code condition} holds.
     *
     * @param condition what to wait for; must be cheap and side-effect free
     * @param timeout   how long to wait
     * @param message   describes the state when the wait fails
     * @throws AssertionError when the condition does not hold in time
     */
    protected static void awaitCondition(BooleanSupplier condition, Duration timeout, Supplier<String> message) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("not within " + timeout + ": " + message.get());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
    }

    /**
     * @param component a component name (the configuration PID of the project's components)
     * @param key       a property of its configuration
     * @return the property as the component's service shows it, or {@code null} (no service, or no
     *         such property): a configuration change has reached the component once it shows there
     */
    protected Object componentProperty(String component, String key) {
        try {
            ServiceReference<?>[] refs = bundleContext.getServiceReferences((String) null,
                    "(component.name=" + component + ")");
            return refs == null || refs.length == 0 ? null : refs[0].getProperty(key);
        } catch (InvalidSyntaxException e) {
            throw new IllegalArgumentException("component=" + component, e);
        }
    }

    /** @return "bsn state" of every installed bundle, for failure messages */
    protected String bundleNames() {
        List<String> names = new ArrayList<>();
        for (Bundle bundle : bundleContext.getBundles()) {
            names.add(bundle.getSymbolicName() + " " + stateName(bundle.getState()));
        }
        return names.toString();
    }

    /**
     * @param state a {@link Bundle} state
     * @return its name
     */
    protected static String stateName(int state) {
        switch (state) {
            case Bundle.UNINSTALLED: return "UNINSTALLED";
            case Bundle.INSTALLED: return "INSTALLED";
            case Bundle.RESOLVED: return "RESOLVED";
            case Bundle.STARTING: return "STARTING";
            case Bundle.STOPPING: return "STOPPING";
            case Bundle.ACTIVE: return "ACTIVE";
            default: return "STATE(" + state + ")";
        }
    }

    // ---------------------------------------------------------------- test JVM side

    private static String requiredProperty(String name) {
        String value = System.getProperty(name);
        if (value == null || value.isEmpty()) {
            throw new IllegalStateException("system property " + name + " is not set (run through failsafe)");
        }
        return value;
    }



    /** "programs/mpiping=755,..." for every file under programs/ in the archive. */
    private static String programModes(Path distribution) {
        try {
            return DistributionArchive.read(distribution, name -> false).values().stream()
                    .filter(entry -> !entry.directory() && entry.name().startsWith("programs/"))
                    .map(entry -> entry.name() + "=" + Integer.toOctalString(entry.mode()))
                    .collect(Collectors.joining(","));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + distribution, e);
        }
    }

    private static Set<PosixFilePermission> permissions(int mode) {
        Set<PosixFilePermission> permissions = EnumSet.noneOf(PosixFilePermission.class);
        PosixFilePermission[] bits = {
            PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_READ,
            PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_READ,
            PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_READ,
        };
        for (int i = 0; i < bits.length; i++) {
            if ((mode & (1 << i)) != 0) {
                permissions.add(bits[i]);
            }
        }
        return permissions;
    }

    /** Values this test set, by configuration PID, to be kept: see {@link #setConfiguration}. */
    private final Map<String, Map<String, String>> configured = new java.util.HashMap<>();

    /** Runs a command as the shipped operator (roles admin, manager, viewer), ACLs applied. */
    protected String admin(String command) throws Exception {
        return AdminConsole.execute(awaitService(SessionFactory.class, null), command, TIMEOUT);
    }

    /**
     * Sets one configuration value as an operator does ({@code config:property-set}) and waits
     * until the configuration keeps it, with every value this test set before in the same PID.
     * Karaf writes the change to {@code etc/<pid>.cfg} and its file scan may read the file back
     * while it is being written, putting older values (or none) back: whatever is not held is
     * set again, until everything holds for four reads in a row.
     */
    protected void setConfiguration(String pid, String key, Object value) throws Exception {
        Map<String, String> wanted = configured.computeIfAbsent(pid, p -> new java.util.LinkedHashMap<>());
        wanted.put(key, String.valueOf(value));
        admin("config:property-set -p " + pid + " " + key + " " + value);
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        int held = 0;
        while (held < 4) {
            Thread.sleep(400);
            String list = admin("config:property-list -p " + pid);
            List<String> lines = list.lines().map(String::trim).toList();
            boolean all = true;
            for (Map.Entry<String, String> e : wanted.entrySet()) {
                if (!lines.contains(e.getKey() + " = " + e.getValue())) {
                    all = false;
                    admin("config:property-set -p " + pid + " " + e.getKey() + " " + e.getValue());
                }
            }
            held = all ? held + 1 : 0;
            if (!all && System.nanoTime() - deadline > 0) {
                throw new AssertionError(pid + " does not keep " + wanted + ": " + list);
            }
        }
    }
}
