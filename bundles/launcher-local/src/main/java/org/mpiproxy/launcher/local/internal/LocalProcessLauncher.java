package org.mpiproxy.launcher.local.internal;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

import org.mpiproxy.api.LaunchException;
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.ProcessLauncher;
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
 * Starts programs of the program directory (and, for plain requests, of the program path) as
 * plain child processes on the proxy's core: as the request's user when it has one (a job started
 * under a job credential), else as {@code rank.user}, else as the proxy's user.
 */
final class LocalProcessLauncher implements ProcessLauncher {

    private final Path programDirectory;
    private final String javaHome;
    private final RankOutputListener output;

    private final List<String> allowlist;
    private final long[] rankUser;
    private final List<Path> programPath;

    LocalProcessLauncher(Path programDirectory, String javaHome) {
        this(programDirectory, javaHome, null, null);
    }

    LocalProcessLauncher(Path programDirectory, String javaHome, RankOutputListener output, List<String> allowlist) {
        this(programDirectory, javaHome, output, allowlist, null);
    }

    /**
     * @param allowlist variables of the proxy's environment ranks get; {@code null}: all
     */
    LocalProcessLauncher(Path programDirectory, String javaHome, RankOutputListener output, List<String> allowlist,
                         long[] rankUser) {
        this(programDirectory, javaHome, output, allowlist, rankUser, List.of());
    }

    /**
     * @param programPath directories searched after {@code programDirectory} for plain requests
     */
    LocalProcessLauncher(Path programDirectory, String javaHome, RankOutputListener output, List<String> allowlist,
                         long[] rankUser, List<Path> programPath) {
        this.programPath = List.copyOf(programPath);
        this.rankUser = rankUser;
        this.programDirectory = Objects.requireNonNull(programDirectory, "programDirectory");
        this.javaHome = javaHome;
        this.output = output;
        this.allowlist = allowlist;
    }

    @Override
    public Path programDirectory() {
        return programDirectory;
    }

    /**
     * @return where a plain request's program is looked up after the program directory
     * @throws LaunchException when the job's user has a staged directory that must not be used
     */
    private List<Path> plainPath(LaunchRequest request) throws LaunchException {
        if (!request.program().startsWith(StagedFiles.PREFIX)) {
            return programPath;
        }
        // a staged program (docs/protocol-v2.md 5.8), named by its content's SHA-256: a user's job
        // finds hers first, then the shared ones, never another user's
        List<Path> staged = StagedFiles.directories(StagedFiles.directory(System::getProperty), request.user());
        List<Path> path = new java.util.ArrayList<>(programPath.size() + staged.size());
        path.addAll(staged);
        path.addAll(programPath);
        return path;
    }

    @Override
    public RankProcess launch(LaunchRequest request) throws LaunchException {
        if (request.coreId() != 0) {
            throw new LaunchException("the local launcher starts programs on core 0, not core "
                    + request.coreId());
        }
        Path executable = request.plain()
                ? ProgramFiles.executable(programDirectory, plainPath(request), request.program())
                : ProgramFiles.executable(programDirectory, request.program());
        // a job's user (docs/protocol-v2.md 4.1) wins over rank.user
        RankIdentity user = RankUser.requested(request.user());
        List<String> argv = RankCommand.argv(executable.toString(), request);
        return RankProcessStarter.start(request.program(), argv, RankCommand.environment(request, javaHome),
                request.logDirectory(), request.jobId(), request.rankId(), request.coreId(),
                OutputSettings.of(output, OutputSettings.DEFAULT_CAP_BYTES, request.environment()), allowlist,
                -1, rankUser, user);
    }
}
