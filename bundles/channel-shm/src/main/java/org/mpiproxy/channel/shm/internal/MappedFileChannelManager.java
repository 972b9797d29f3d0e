package org.mpiproxy.channel.shm.internal;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Map;
import java.util.function.Consumer;

import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.PrivateDirectories;
import org.mpiproxy.api.RankChannel;
import org.mpiproxy.api.config.CheckedConfiguration;
import org.mpiproxy.channel.shm.ChannelDescriptor;
import org.mpiproxy.channel.shm.MappedRankChannel;
import org.mpiproxy.channel.shm.RingDescriptor;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Channel files {@code <base>/job-<uid>-<16 hex>/rank-<rankId>.chan}, owner-only, one per rank.
 * The base directory is made at activation (or checked: the proxy's user's, writable by nobody
 * else, not a link; otherwise the manager does not start) and checked again before every new job.
 * A job's directory is created exclusively by the job's first {@link #open}: a directory that
 * exists already (a crashed run's, or an attacker's) makes the open fail instead of being
 * shared. Channel files are created exclusively and mapped again without following links.
 */
@Component(name = MappedFileChannelManager.PID, enabled = false, service = ChannelManager.class,
    configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = MappedFileChannelManager.Config.class)
public final class MappedFileChannelManager implements ChannelManager {

    /** Component name and configuration PID. */
    public static final String PID = "org.mpiproxy.channel.shm";

    /** Configuration of the shared-memory channels. */
    @ObjectClassDefinition(name = "MPI proxy shared-memory channels",
        description = "Where the memory-mapped channel files between the proxy and its ranks live, and how big their rings are.")
    public @interface Config {

        /**
         * @return the base directory
         */
        @AttributeDefinition(name = "Base directory",
            description = "Directory holding one job-<uid>-<16 hex> directory per job (created 0700 when missing, "
                + "0711 with an owner.user). One that exists already must be a directory of the proxy's user that "
                + "neither its group nor others can write, not a symbolic link: otherwise it is refused in one line "
                + "and the channel manager does not start. Preferably on a memory file system such as /dev/shm. "
                + "A relative path is resolved against karaf.data, or the working directory.")
        String base_directory() default "/dev/shm/mpiproxy";

        /**
         * @return the ring capacity
         */
        @AttributeDefinition(name = "Ring capacity",
            description = "Bytes of each ring's data area, per direction and rank: a power of two between 4096 "
                + "and 1073741824. Applies to channels created afterwards.",
            min = "4096", max = "1073741824")
        int ring_capacity() default 2097152;

        /**
         * @return the owner of job directories and channel files
         */
        @AttributeDefinition(name = "Owner",
            description = "Numeric <uid>:<gid> owning job directories and channel files, the same as the launchers'"
                + " rank.user, so that ranks running as that user can map their channels and no other user's."
                + " Needs the proxy to run as root. Empty means the proxy's own user.")
        String owner_user() default "";
    }

    private static final Logger LOG = LoggerFactory.getLogger(MappedFileChannelManager.class);

    private static final FileAttribute<?> DIRECTORY_PERMISSIONS = PosixFilePermissions.asFileAttribute(
        EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE));

    /** The last good configuration of this bundle's channel manager, kept across re-activations. */
    private static final CheckedConfiguration<Config> CONFIGURATIONS = new CheckedConfiguration<>(PID, Config.class, LOG::warn);

    private final CheckedConfiguration<Config> configurations;
    /** Where the one-line configuration problems go. */
    private final Consumer<String> problems;
    /** The settings of jobs created from now on. */
    private volatile ChannelSettings settings;
    /** Jobs whose directory this manager created and has not released, with the settings they were created with. */
    private final java.util.Map<Long, ChannelSettings> created = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Checks the raw configuration: bad values are logged in one line, and the manager then
     * starts with the last good configuration, or, with none yet, does not start.
     *
     * @param properties the raw configuration properties
     * @throws org.mpiproxy.api.config.RejectedConfigurationException when a value is bad and there
     *                                                                is no last good configuration
     */
    @Activate
    public MappedFileChannelManager(Map<String, Object> properties) {
        this(properties, CONFIGURATIONS, LOG::error);
    }

    /**
     * @param properties     the raw configuration properties
     * @param configurations checks them and remembers the last good configuration
     * @param problems       gets each one-line configuration problem
     */
    MappedFileChannelManager(Map<String, Object> properties, CheckedConfiguration<Config> configurations,
                             Consumer<String> problems) {
        this(configurations.activation(properties, MappedFileChannelManager::usable,
            line -> problems.accept(PID + ": " + line)), configurations, problems);
    }

    /**
     * @param config the configuration
     * @throws IllegalArgumentException when a value is invalid; the message names key and value
     */
    MappedFileChannelManager(Config config) {
        this(config, new CheckedConfiguration<>(Config.class), LOG::error);
    }

    private MappedFileChannelManager(Config config, CheckedConfiguration<Config> configurations,
                                     Consumer<String> problems) {
        this.configurations = configurations;
        this.problems = problems;
        this.settings = ChannelSettings.of(config, currentUid());
        LOG.info("Shared-memory channels in {}", settings.describe());
    }

    MappedFileChannelManager(Path baseDirectory, int ringCapacity) {
        this(baseDirectory, ringCapacity, null);
    }

    /**
     * @param owner {uid, gid} to give job directories and channel files, or {@code null} to keep the proxy's
     */
    MappedFileChannelManager(Path baseDirectory, int ringCapacity, long[] owner) {
        this.configurations = new CheckedConfiguration<>(Config.class);
        this.problems = LOG::error;
        this.settings = ChannelSettings.of(baseDirectory, ringCapacity, owner, currentUid());
    }

    /**
     * Applies a new configuration in place: jobs created from now on use it; a running job keeps
     * its directory and owner, and its channels their mappings. A bad value is logged, naming its
     * key and the value, and the last good configuration stays.
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
            problems.accept(configurations.refused(PID + ": " + problem + "; keeping the last good configuration, channels in "
                + settings.describe()));
        } else {
            LOG.info("Shared-memory channels reconfigured: {}", settings.describe());
        }
    }

    /**
     * @param config the new configuration
     * @return {@code null} when it was applied, else why not ({@code key=value ...})
     */
    String reconfigure(Config config) {
        try {
            settings = usable(config);
            configurations.remember(config);
            return null;
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    /**
     * Checks a configuration as the gate and an activation do: its values, and its base directory,
     * which is made now when missing ({@link #prepareBase}).
     *
     * @param config the configuration
     * @return the settings
     * @throws IllegalArgumentException naming the bad key and its value, or saying why the base
     *                                  directory is refused (another owner, writable by others, a link)
     */
    static ChannelSettings usable(Config config) {
        ChannelSettings s = ChannelSettings.of(config, currentUid());
        try {
            prepareBase(s);
        } catch (IOException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
        return s;
    }

    /**
     * Makes the base directory (owner-only; search-only for others when an owner is configured, so
     * that ranks of that user reach their own job directory without listing the others), or checks
     * the one that is there: a directory of the proxy's user, not a link, writable by nobody else.
     * Search by others is never taken away: a launcher gives it when a job's ranks run as the job's
     * user (docs/protocol-v2.md 4.1), whose ranks may be mapping their channels.
     *
     * @param s the settings
     * @throws IOException with one line naming {@code base.directory} and why it is refused
     */
    static void prepareBase(ChannelSettings s) throws IOException {
        String what = "base.directory=" + s.baseDirectory();
        if (s.owner() == null) {
            PrivateDirectories.ensure(s.baseDirectory(), PrivateDirectories.OWNER_ONLY, what);
        }
        PrivateDirectories.restrict(s.baseDirectory(), PrivateDirectories.SEARCH_ONLY, what);
    }

    /**
     * @param value {@code <uid>:<gid>}, or empty
     * @return {uid, gid}, or {@code null} for empty
     */
    static long[] parseOwner(String value) {
        return org.mpiproxy.api.config.UidGid.parse("owner.user", value);
    }

    private static void chown(Path path, long[] owner) throws IOException {
        if (owner != null) {
            Files.setAttribute(path, "unix:gid", (int) owner[1], LinkOption.NOFOLLOW_LINKS);
            Files.setAttribute(path, "unix:uid", (int) owner[0], LinkOption.NOFOLLOW_LINKS);
        }
    }

    /** @return the effective user id of this process (the owner of {@code /proc/self}), or -1 when unknown */
    static long currentUid() {
        return PrivateDirectories.currentUid();
    }

    /** @return the user id in the names of job directories created from now on */
    long uid() {
        return settings.uid();
    }

    @Override
    public synchronized RankChannel open(long jobId, int rankId) throws IOException {
        if (rankId < 1) {
            throw new IllegalArgumentException("rankId=" + rankId + " must be >= 1");
        }
        ChannelSettings job = ensureJobDirectory(jobId);
        Path file = job.baseDirectory().resolve(ChannelDescriptor.jobDirectoryName(job.uid(), jobId))
            .resolve(ChannelDescriptor.fileName(rankId));
        try {
            MappedRankChannel channel = MappedRankChannel.create(file, settings.ringCapacity(), jobId, rankId);
            try {
                chown(file, job.owner());
            } catch (IOException | RuntimeException e) {
                channel.close();
                Files.deleteIfExists(file);
                throw e;
            }
            return new GuardedRankChannel(channel, job.baseDirectory());
        } catch (FileAlreadyExistsException e) {
            return new GuardedRankChannel(mapExisting(file, jobId, rankId), job.baseDirectory());
        } catch (InternalError e) {
            // the header's page could not be had (the file is removed again by create)
            throw GuardedRankChannel.fault(job.baseDirectory(), jobId, rankId, file, "header", e);
        }
    }

    @Override
    public synchronized RankChannel reopen(long jobId, int rankId) throws IOException {
        if (rankId < 1) {
            throw new IllegalArgumentException("rankId=" + rankId + " must be >= 1");
        }
        Path jobDirectory = jobDirectory(jobId);
        if (Files.isSymbolicLink(jobDirectory) || !Files.isDirectory(jobDirectory, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException("job directory " + jobDirectory + " is gone or is not a directory");
        }
        created.putIfAbsent(jobId, settings);
        return new GuardedRankChannel(mapExisting(jobDirectory.resolve(ChannelDescriptor.fileName(rankId)), jobId,
            rankId), jobDirectory.getParent());
    }

    @Override
    public synchronized void remove(long jobId, int rankId) throws IOException {
        Files.deleteIfExists(jobDirectory(jobId).resolve(ChannelDescriptor.fileName(rankId)));
    }

    @Override
    public synchronized void release(long jobId) throws IOException {
        Path jobDirectory = jobDirectory(jobId);
        created.remove(jobId);
        if (!Files.exists(jobDirectory, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        if (!Files.isDirectory(jobDirectory, LinkOption.NOFOLLOW_LINKS)) {
            Files.delete(jobDirectory);
            return;
        }
        // walkFileTree does not follow symbolic links: a link is deleted, never its target
        Files.walkFileTree(jobDirectory, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.delete(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException failure) throws IOException {
                if (failure != null) {
                    throw failure;
                }
                Files.delete(dir);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    /** A job created before a reconfiguration keeps the directory it was created in. */
    @Override
    public Path jobDirectory(long jobId) {
        ChannelSettings s = created.getOrDefault(jobId, settings);
        return s.baseDirectory().resolve(ChannelDescriptor.jobDirectoryName(s.uid(), jobId));
    }

    @Override
    public Path baseDirectory() {
        return settings.baseDirectory();
    }

    /** @return capacity of each ring of channels created from now on */
    int ringCapacity() {
        return settings.ringCapacity();
    }

    /** @return the settings the job's directory was (or is now) created with */
    private ChannelSettings ensureJobDirectory(long jobId) throws IOException {
        ChannelSettings existing = created.get(jobId);
        if (existing != null) {
            Path jobDirectory = jobDirectory(jobId);
            if (Files.isSymbolicLink(jobDirectory) || !Files.isDirectory(jobDirectory, LinkOption.NOFOLLOW_LINKS)) {
                throw new IOException("job directory " + jobDirectory + " is gone or replaced");
            }
            return existing;
        }
        ChannelSettings s = settings;
        Path baseDirectory = s.baseDirectory();
        // checked at every new job: a base directory removed meanwhile may have been made again by anyone
        prepareBase(s);
        if (s.owner() != null) {
            // ranks of another user must reach their own job directory: search, but no listing
            Files.getFileAttributeView(baseDirectory, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                .setPermissions(PrivateDirectories.SEARCH_ONLY);
        }
        Path jobDirectory = baseDirectory.resolve(ChannelDescriptor.jobDirectoryName(s.uid(), jobId));
        FileAttribute<?>[] attributes = jobDirectory.getFileSystem().supportedFileAttributeViews().contains("posix")
            ? new FileAttribute<?>[] {DIRECTORY_PERMISSIONS}
            : new FileAttribute<?>[0];
        try {
            Files.createDirectory(jobDirectory, attributes);
        } catch (FileAlreadyExistsException e) {
            throw new IOException("job directory " + jobDirectory + " exists already; refusing to share it", e);
        }
        try {
            chown(jobDirectory, s.owner());
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(jobDirectory);
            throw e;
        }
        created.put(jobId, s);
        return s;
    }

    private static MappedRankChannel mapExisting(Path file, long jobId, int rankId) throws IOException {
        if (Files.isSymbolicLink(file)) {
            throw new IOException("channel file " + file + " is a symbolic link; refusing to use it");
        }
        MappedRankChannel channel = MappedRankChannel.map(file);
        if (channel.jobId() != jobId || channel.rankId() != rankId) {
            channel.close();
            throw new IOException("channel file " + file + " belongs to job " + Long.toHexString(channel.jobId())
                + " rank " + channel.rankId() + ", not job " + Long.toHexString(jobId) + " rank " + rankId);
        }
        return channel;
    }

    static Path resolveBaseDirectory(String value) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException("base.directory=" + value + " must not be empty");
        }
        Path path;
        try {
            path = Paths.get(value.trim());
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException("base.directory=" + value + " is not a valid path: " + e.getMessage(), e);
        }
        if (!path.isAbsolute()) {
            String data = System.getProperty("karaf.data");
            path = Paths.get(data != null && !data.isBlank() ? data : System.getProperty("user.dir")).resolve(path);
        }
        return path.normalize();
    }

    static int checkRingCapacity(int value) {
        if (!RingDescriptor.isValidCapacity(value)) {
            throw new IllegalArgumentException("ring.capacity=" + value + " must be a power of two between "
                + RingDescriptor.MIN_CAPACITY + " and " + RingDescriptor.MAX_CAPACITY);
        }
        return value;
    }
}
