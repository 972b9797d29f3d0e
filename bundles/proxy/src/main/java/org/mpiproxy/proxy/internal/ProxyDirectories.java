package org.mpiproxy.proxy.internal;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.UserPrincipalNotFoundException;

import org.mpiproxy.api.PrivateDirectories;
import org.mpiproxy.process.RankLogFiles;
import org.mpiproxy.process.StagedFiles;

/**
 * The directories the proxy writes besides shared memory: the ranks' logs ({@code log.directory}),
 * the state directory ({@code state.directory}) and the staged programs. Each that exists must be
 * the proxy's user's, writable by nobody else and not a link ({@link PrivateDirectories#problem}),
 * or the configuration is refused: at the first start the proxy does not start. Missing ones are made
 * when first needed, owner-only. The log directory is owner-only, or readable by {@code log.group}.
 */
final class ProxyDirectories {

    private ProxyDirectories() {
    }

    /**
     * Checks what the proxy would write into: the directories that exist, and {@code log.group}.
     *
     * @param config the configuration
     * @throws IllegalArgumentException one line naming the refused directory (its key) and why
     */
    static void check(ProxyConfig config) {
        logGroup(config);
        Path logs = ProxySettings.resolveLogDirectory(config.log_directory());
        refuse(PrivateDirectories.problem(logs, "log.directory=" + logs));
        Path state = ProxyConfigs.stateDirectory(config);
        refuse(PrivateDirectories.problem(state, "state.directory=" + state));
        Path staged = StagedFiles.directory(System::getProperty);
        refuse(PrivateDirectories.problem(staged, "staged directory " + staged));
    }

    private static void refuse(String problem) {
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
    }

    /**
     * @param config the configuration
     * @return the group of {@code log.group}, or {@code null} when it is empty
     * @throws IllegalArgumentException when the group is not known here
     */
    static GroupPrincipal logGroup(ProxyConfig config) {
        String name = config.log_group() == null ? "" : config.log_group().trim();
        if (name.isEmpty()) {
            return null;
        }
        try {
            return FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByGroupName(name);
        } catch (UserPrincipalNotFoundException e) {
            throw new IllegalArgumentException("log.group=" + name + " is not a group of this node");
        } catch (IOException | UnsupportedOperationException e) {
            throw new IllegalArgumentException("log.group=" + name + " cannot be looked up: " + e);
        }
    }

    /**
     * Gives the log directory the access {@code log.group} asks for: with a group, the directory is
     * made when missing and becomes {@code rwxr-x---} of that group; without, an existing one
     * becomes {@code rwx------} (one made later is made so). Jobs' directories and files follow it
     * ({@link RankLogFiles}).
     *
     * @param config the configuration, checked ({@link #check})
     * @throws IOException when the directory cannot be made or changed
     */
    static void applyLogAccess(ProxyConfig config) throws IOException {
        Path logs = ProxySettings.resolveLogDirectory(config.log_directory());
        GroupPrincipal group = logGroup(config);
        String what = "log.directory=" + logs;
        if (group == null) {
            if (Files.exists(logs, LinkOption.NOFOLLOW_LINKS)) {
                PrivateDirectories.restrict(logs, PrivateDirectories.OWNER_ONLY, what);
            }
            return;
        }
        PrivateDirectories.ensure(logs, RankLogFiles.DIRECTORY_GROUP_READ, what);
        PosixFileAttributeView view = Files.getFileAttributeView(logs, PosixFileAttributeView.class,
                LinkOption.NOFOLLOW_LINKS);
        view.setGroup(group);
        view.setPermissions(RankLogFiles.DIRECTORY_GROUP_READ);
    }

    /**
     * {@link #applyLogAccess} whose failure is one line, not an exception: the node serves on.
     *
     * @param config the configuration, checked ({@link #check})
     * @param log    where the line goes
     */
    static void applyLogAccess(ProxyConfig config, org.slf4j.Logger log) {
        try {
            applyLogAccess(config);
        } catch (IOException | RuntimeException e) {
            log.error("org.mpiproxy.proxy: cannot give the log directory the access log.group={} asks for: {}",
                    config.log_group(), e.getMessage());
        }
    }
}
