package org.mpiproxy.channel.shm.internal;

import java.nio.file.Path;

/**
 * Validated configuration of the channel manager.
 *
 * @param baseDirectory absolute, normalised directory holding the job directories
 * @param ringCapacity  bytes of each ring's data area of channels created from now on
 * @param owner         {uid, gid} owning job directories and channel files, or {@code null} for
 *                      the proxy's own user
 * @param uid           the user id in the names of job directories
 */
record ChannelSettings(Path baseDirectory, int ringCapacity, long[] owner, long uid) {

    /**
     * @param baseDirectory the base directory (made absolute and normalised)
     * @param ringCapacity  the ring capacity
     * @param owner         {uid, gid}, or {@code null}
     * @param self          the proxy's user id (-1 when unknown)
     * @return the settings
     * @throws IllegalArgumentException naming the bad key and its value
     */
    static ChannelSettings of(Path baseDirectory, int ringCapacity, long[] owner, long self) {
        MappedFileChannelManager.checkRingCapacity(ringCapacity);
        if (owner != null && self != 0 && owner[0] != self) {
            throw new IllegalArgumentException("owner.user=" + owner[0] + ":" + owner[1]
                + " needs the proxy to run as root, it runs as uid " + self);
        }
        return new ChannelSettings(baseDirectory.toAbsolutePath().normalize(), ringCapacity, owner,
            owner != null ? owner[0] : self);
    }

    /**
     * @param config the configuration
     * @param self   the proxy's user id
     * @return the settings
     * @throws IllegalArgumentException naming the first bad key and its value
     */
    static ChannelSettings of(MappedFileChannelManager.Config config, long self) {
        return of(MappedFileChannelManager.resolveBaseDirectory(config.base_directory()), config.ring_capacity(),
            MappedFileChannelManager.parseOwner(config.owner_user()), self);
    }

    String describe() {
        return baseDirectory + " with ring capacity " + ringCapacity
            + (owner == null ? "" : ", owned by " + owner[0] + ":" + owner[1]);
    }
}
