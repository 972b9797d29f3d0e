package org.mpiproxy.launcher.core.internal;

import java.io.IOException;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.List;
import java.util.Objects;

import org.mpiproxy.api.LaunchException;
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.api.ProgramNames;
import org.mpiproxy.api.RankIdentity;
import org.mpiproxy.api.RankProcess;
import org.mpiproxy.api.RankOutputListener;
import org.mpiproxy.process.OutputSettings;
import org.mpiproxy.process.ProgramFiles;
import org.mpiproxy.process.RankCommand;
import org.mpiproxy.process.RankProcessStarter;
import org.mpiproxy.process.RankUser;
import org.mpiproxy.process.StagedFiles;

/**
 * Starts a program from its LZ4 image, pinned to the requested core (RankProcessStarter): as the
 * request's user when it has one (a job started under a job credential, its image extracted where
 * that user's group may run it), else as {@code rank.user}, else as the proxy's user.
 */
final class PinnedCoreLauncher implements ProcessLauncher {

    static final String IMAGE_SUFFIX = ProgramNames.IMAGE_SUFFIX;

    private final Path programDirectory;
    private final ImageCache images;
    private final AllowedCpus cpus;
    private final String javaHome;
    private final RankOutputListener output;

    private final List<String> allowlist;
    private final long[] rankUser;

    /** Where staged programs are: they run pinned from there, without an image. */
    private final Path stagedDirectory;

    PinnedCoreLauncher(Path programDirectory, ImageCache images, AllowedCpus cpus, String javaHome) {
        this(programDirectory, images, cpus, javaHome, null, null);
    }

    PinnedCoreLauncher(Path programDirectory, ImageCache images, AllowedCpus cpus, String javaHome,
                       RankOutputListener output, List<String> allowlist) {
        this(programDirectory, images, cpus, javaHome, output, allowlist, null);
    }

    /**
     * @param rankUser {uid, gid} ranks run as (through {@code setpriv}), or {@code null} for the
     *                 proxy's own user
     */
    PinnedCoreLauncher(Path programDirectory, ImageCache images, AllowedCpus cpus, String javaHome,
                       RankOutputListener output, List<String> allowlist, long[] rankUser) {
        this(programDirectory, images, cpus, javaHome, output, allowlist, rankUser,
                StagedFiles.directory(System::getProperty));
    }

    /** @param stagedDirectory where staged programs are (docs/protocol-v2.md 5.8) */
    PinnedCoreLauncher(Path programDirectory, ImageCache images, AllowedCpus cpus, String javaHome,
                       RankOutputListener output, List<String> allowlist, long[] rankUser, Path stagedDirectory) {
        this.stagedDirectory = stagedDirectory;
        this.rankUser = rankUser;
        this.allowlist = allowlist;
        this.programDirectory = Objects.requireNonNull(programDirectory, "programDirectory");
        this.images = Objects.requireNonNull(images, "images");
        this.cpus = Objects.requireNonNull(cpus, "cpus");
        this.javaHome = javaHome;
        this.output = output;
    }

    ImageCache images() {
        return images;
    }

    @Override
    public Path programDirectory() {
        return programDirectory;
    }

    @Override
    public RankProcess launch(LaunchRequest request) throws LaunchException {
        int core = request.coreId();
        if (core < 1) {
            throw new LaunchException("the core launcher starts programs on cores >= 1, not core "
                    + core);
        }
        checkCoreExists(core);
        // a job's user (docs/protocol-v2.md 4.1) wins over rank.user
        RankIdentity user = RankUser.requested(request.user());
        Path executable;
        if (request.plain() && request.program().startsWith(StagedFiles.PREFIX)) {
            // a staged program is already this node's own verified copy (5.8): it runs pinned as it is,
            // a user's job finding hers first, then the shared ones, never another user's
            List<Path> staged = StagedFiles.directories(stagedDirectory, request.user());
            executable = ProgramFiles.executable(staged.get(0), staged.subList(1, staged.size()), request.program());
        } else {
            Path image = ProgramFiles.contained(programDirectory, request.program(), request.program() + IMAGE_SUFFIX);
            executable = images.extract(request.program(), image, user == null ? -1 : user.gid());
        }
        return RankProcessStarter.start(request.program(), RankCommand.argv(executable.toString(), request),
                RankCommand.environment(request, javaHome),
                request.logDirectory(), request.jobId(), request.rankId(), core,
                OutputSettings.of(output, OutputSettings.DEFAULT_CAP_BYTES, request.environment()), allowlist,
                core, rankUser, user);
    }

    private void checkCoreExists(int core) throws LaunchException {
        String list;
        BitSet allowed;
        try {
            list = cpus.list();
            allowed = CpuList.parse(list);
        } catch (IOException | IllegalArgumentException e) {
            throw new LaunchException("cannot tell which cores exist on this node: "
                    + e.getMessage(), e);
        }
        if (!allowed.get(core)) {
            throw new LaunchException("core " + core + " does not exist on this node (cores "
                    + list.trim() + ")");
        }
    }
}
