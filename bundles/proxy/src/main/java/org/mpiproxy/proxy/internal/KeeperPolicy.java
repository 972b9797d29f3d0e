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
