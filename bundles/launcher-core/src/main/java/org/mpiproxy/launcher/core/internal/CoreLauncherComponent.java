package org.mpiproxy.launcher.core.internal;

import org.mpiproxy.api.LaunchException;
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.api.RankProcess;
import org.mpiproxy.api.RankOutputListener;
import org.mpiproxy.launcher.LauncherDirectories;
import org.mpiproxy.launcher.OutputListeners;
import org.mpiproxy.launcher.RankEnvironment;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** DS adapter: registers a {@link PinnedCoreLauncher} for cores &gt;= 1. */
@Component(name = CoreLauncherComponent.PID, service = ProcessLauncher.class,
        property = ProcessLauncher.KIND + "=" + ProcessLauncher.KIND_CORE)
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
    }

    private final PinnedCoreLauncher launcher;
    private final OutputListeners outputListeners = new OutputListeners();

    /**
     * @param config the component configuration
     * @throws IllegalArgumentException when {@code max.image.size} is not positive
     */
    @Activate
    public CoreLauncherComponent(Config config) {
        long maxImageSize = config.max_image_size();
        if (maxImageSize <= 0) {
            throw new IllegalArgumentException("max.image.size=" + maxImageSize + " must be > 0");
        }
        ImageDigests digests = digests(config.image_digests());
        ImageCache images = new ImageCache(
                LauncherDirectories.dataDirectory(config.cache_directory(), System::getProperty, "mpiproxy/images"),
                maxImageSize, digests);
        launcher = new PinnedCoreLauncher(
                LauncherDirectories.programDirectory(config.program_directory(), System::getProperty),
                images, AllowedCpus.ofThisProcess(), System.getProperty("java.home"), outputListeners,
                RankEnvironment.parseAllowlist(config.environment_allowlist()));
        LOG.info("Core launcher started, images in {}, cache {}, max.image.size={}, {}, {}",
                launcher.programDirectory(), images.directory(), maxImageSize, Lz4Codecs.description(),
                digests.source() == null ? "any image" : digests.size() + " image digests from " + digests.source());
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
        outputListeners.remove(listener);
    }

    PinnedCoreLauncher launcher() {
        return launcher;
    }

    @Override
    public RankProcess launch(LaunchRequest request) throws LaunchException {
        return launcher.launch(request);
    }
}
