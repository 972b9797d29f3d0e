package org.mpiproxy.proxy.internal;

import java.io.IOException;
import java.nio.file.Path;

import org.mpiproxy.process.KeeperFiles;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The proxy's side of the node keeper (see {@link KeeperFiles}): when Karaf runs under a keeper,
 * the proxy tells it how long ranks outlive this JVM and how they are stopped, and removes what
 * ended keepers recorded once their ranks are dealt with. Without a keeper both do nothing. Any
 * thread.
 */
final class KeeperPolicy {

    private static final Logger LOG = LoggerFactory.getLogger(KeeperPolicy.class);
    /** How many ancestors of the JVM are looked at for its keeper (the start scripts are a few). */
    private static final int MAX_DEPTH = 8;

    private KeeperPolicy() {
    }

    /** Writes {@code restart.survive.seconds} and {@code stop.grace.seconds} to the keeper's policy. */
    static void tell(ProxyConfig config) {
        Path keeper = KeeperFiles.own();
        if (keeper == null) {
            return;
        }
        try {
            KeeperFiles.writePolicy(keeper, config.restart_survive_seconds(), config.stop_grace_seconds());
        } catch (IOException e) {
            LOG.warn("cannot tell the node keeper in {} how long ranks outlive this JVM: {}", keeper, e.toString());
        }
    }

    /**
     * @param keeperPid a keeper's pid
     * @param process   a process
     * @return whether the keeper runs and is an ancestor of {@code process} (Karaf's JVM runs under
     *         a start script or straight under its keeper): when it was killed, the JVM's ancestors
     *         became others, and a process that reuses the pid is none of them
     */
    static boolean runsUnder(long keeperPid, ProcessHandle process) {
        if (keeperPid <= 1) {
            return false;
        }
        java.util.Optional<ProcessHandle> ancestor = process.parent();
        for (int depth = 0; depth < MAX_DEPTH && ancestor.isPresent(); depth++) {
            ProcessHandle p = ancestor.get();
            if (p.pid() == keeperPid) {
                return p.isAlive();
            }
            if (p.pid() <= 1) {
                return false;
            }
            ancestor = p.parent();
        }
        return false;
    }

    /** Removes the directories of keepers that have ended (after the ledger's sweep). */
    static void removeEnded() {
        Path keeper = KeeperFiles.own();
        if (keeper != null && keeper.getParent() != null) {
            int removed = KeeperFiles.removeEnded(keeper.getParent());
            if (removed > 0) {
                LOG.info("removed the records of {} ended node keeper(s)", removed);
            }
        }
    }
}
