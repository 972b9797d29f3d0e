package org.mpiproxy.launcher.core.internal;

import java.util.Map;
import java.util.function.Consumer;

import org.mpiproxy.api.LaunchException;
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.api.RankProcess;
import org.mpiproxy.api.RankOutputListener;
import org.mpiproxy.api.config.CheckedConfiguration;
import org.mpiproxy.process.OutputListeners;
import org.mpiproxy.process.RankEnvironment;
import org.mpiproxy.process.RankUser;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** DS adapter: registers a {@link PinnedCoreLauncher} for cores &gt;= 1. */
@Component(name = CoreLauncherComponent.PID, enabled = false, service = ProcessLauncher.class,
        property = {ProcessLauncher.KIND + "=" + ProcessLauncher.KIND_CORE, ProcessLauncher.CORES + "=1-"})
@Designate(ocd = CoreLauncherComponent.Config.class)
public final class CoreLauncherComponent implements ProcessLauncher {

    static final String PID = "org.mpiproxy.launcher.core";

    private static final Logger LOG = LoggerFactory.getLogger(CoreLauncherComponent.class);

    /** Configuration of the remote-core launcher. */
    @ObjectClassDefinition(name = "MPI proxy core launcher",
            description = "Starts rank programs pinned to another core (coreId >= 1) from LZ4-compressed images.")
    public @interface Config {

        @AttributeDefinition(name = "Program directory",
                description = "Directory holding the program images <name>.lz4 (LZ4 frame format), named by EXEC."
                        + " Empty means ${karaf.home}/programs.")
        String program_directory() default "";

        @AttributeDefinition(name = "Cache directory",
                description = "Private directory (mode 0700) for decompressed images, reused while an image is"
                        + " unchanged. Empty means ${karaf.data}/mpiproxy/images.")
        String cache_directory() default "";

        @AttributeDefinition(name = "Maximum image size",
                description = "Largest decompressed program image accepted, in bytes (> 0).")
        long max_image_size() default 268435456L;

        @AttributeDefinition(name = "Image digests",
                description = "File listing the SHA-256 digests (64 hex digits per line, # comments) of the images"
                        + " this node runs; an image not on the list is refused. Empty means any image.")
        String image_digests() default "";

        @AttributeDefinition(name = "Environment allowlist",
                description = "Comma-separated variables of the proxy's environment that ranks get (a trailing *"
                        + " matches any suffix); ranks also get what the job asked for, JAVA_HOME and MPIPROXY_*.")
        String environment_allowlist() default RankEnvironment.DEFAULT_ALLOWLIST;

        @AttributeDefinition(name = "Rank user",
                description = "Numeric <uid>:<gid> ranks run as (through setpriv) when the proxy runs as root; the"
                        + " image cache is then shared with that group (search and run only). Give"
                        + " org.mpiproxy.channel.shm the same owner.user. Empty means the proxy's own user. The ranks"
                        + " of a job a user started with a job credential run as that user instead.")
        String rank_user() default "";
    }

    /** The last good configuration of this bundle's launcher, kept across re-activations. */
    private static final CheckedConfiguration<Config> CONFIGURATIONS = new CheckedConfiguration<>(PID, Config.class, LOG::warn);

    private final CheckedConfiguration<Config> configurations;
    /** Where the one-line configuration problems go. */
    private final Consumer<String> problems;
    private final OutputListeners outputListeners = new OutputListeners();
    /** Set when this component stops: see {@link #deactivate()}. */
    private volatile boolean stopping;
    private volatile PinnedCoreLauncher launcher;

    /**
     * Checks the raw configuration: bad values are logged in one line, and the launcher then
     * starts with the last good configuration, or, with none yet, does not start.
     *
     * @param properties the raw configuration properties
     * @throws org.mpiproxy.api.config.RejectedConfigurationException when a value is bad and there
     *                                                                is no last good configuration
     */
    @Activate
    public CoreLauncherComponent(Map<String, Object> properties) {
        this(properties, CONFIGURATIONS, LOG::error);
    }

    /**
     * @param properties     the raw configuration properties
     * @param configurations checks them and remembers the last good configuration
     * @param problems       gets each one-line configuration problem
     */
    CoreLauncherComponent(Map<String, Object> properties, CheckedConfiguration<Config> configurations,
            Consumer<String> problems) {
        this(configurations.activation(properties, c -> CoreLauncherSettings.of(c, System::getProperty, RankUser.isRoot()),
                line -> problems.accept(PID + ": " + line)), configurations, problems);
    }

    /**
     * @param config the component configuration
     * @throws IllegalArgumentException when a value is bad, naming its key and the value
     */
    CoreLauncherComponent(Config config) {
        this(config, new CheckedConfiguration<>(Config.class), LOG::error);
    }

    private CoreLauncherComponent(Config config, CheckedConfiguration<Config> configurations, Consumer<String> problems) {
        this.configurations = configurations;
        this.problems = problems;
        CoreLauncherSettings settings = CoreLauncherSettings.of(config, System::getProperty, RankUser.isRoot());
        launcher = create(settings);
        LOG.info("Core launcher started, {}, {}", describe(settings), Lz4Codecs.description());
    }

    /**
     * Applies a new configuration in place: ranks started from now on use it, running ranks are
     * not touched. A bad value is logged, naming its key and the value, and the last good
     * configuration stays.
     *
     * @param properties the new raw configuration properties
     */
    @Modified
    void modified(Map<String, Object> properties) {
        String problem;
        try {
            problem = reconfigure(configurations.typed(properties));
        } catch (IllegalArgumentException e) {
            problem = e.getMessage();
        }
        if (problem != null) {
            problems.accept(configurations.refused(PID + ": " + problem + "; keeping the last good configuration, images in "
                    + launcher.programDirectory()));
        }
    }

    /**
     * @param config the new configuration
     * @return {@code null} when it was applied, else why not ({@code key=value ...})
     */
    String reconfigure(Config config) {
        CoreLauncherSettings settings;
        try {
            settings = CoreLauncherSettings.of(config, System::getProperty, RankUser.isRoot());
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        launcher = create(settings);
        configurations.remember(config);
        LOG.info("Core launcher reconfigured, {}", describe(settings));
        return null;
    }

    private PinnedCoreLauncher create(CoreLauncherSettings s) {
        ImageCache images = new ImageCache(s.cacheDirectory(), s.maxImageSize(), s.digests(),
                s.rankUser() == null ? -1 : s.rankUser()[1]);
        return new PinnedCoreLauncher(s.programDirectory(), images, AllowedCpus.ofThisProcess(),
                System.getProperty("java.home"), outputListeners, s.allowlist(), s.rankUser());
    }

    private static String describe(CoreLauncherSettings s) {
        return "images in " + s.programDirectory() + ", cache " + s.cacheDirectory() + ", max.image.size="
                + s.maxImageSize() + ", " + (s.digests().source() == null ? "any image"
                : s.digests().size() + " image digests from " + s.digests().source())
                + (s.rankUser() == null ? "" : ", ranks run as " + s.rankUser()[0] + ":" + s.rankUser()[1]);
    }

    static ImageDigests digests(String file) {
        if (file == null || file.isBlank()) {
            return ImageDigests.ANY;
        }
        try {
            return ImageDigests.load(java.nio.file.Path.of(file.trim()));
        } catch (java.io.IOException | java.nio.file.InvalidPathException e) {
            throw new IllegalArgumentException("image.digests=" + file + " cannot be read: " + e, e);
        }
    }

    /** @param listener receives the output of ranks started from now on */
    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            unbind = "removeOutputListener")
    void addOutputListener(RankOutputListener listener) {
        outputListeners.add(listener);
    }

    void removeOutputListener(RankOutputListener listener) {
        if (!stopping) {
            outputListeners.remove(listener);
        }
    }

    /**
     * The ranks this component started keep writing to the listeners they had when it stops (an
     * update of this bundle): a proxy's listener that goes away later hands their lines on to the
     * proxy's next revision.
     */
    @Deactivate
    void deactivate() {
        stopping = true;
    }

    PinnedCoreLauncher launcher() {
        return launcher;
    }

    @Override
    public java.nio.file.Path programDirectory() {
        return launcher.programDirectory();
    }

    @Override
    public RankProcess launch(LaunchRequest request) throws LaunchException {
        return launcher.launch(request);
    }
}
