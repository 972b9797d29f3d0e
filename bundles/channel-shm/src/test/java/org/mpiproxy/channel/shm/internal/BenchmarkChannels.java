package org.mpiproxy.channel.shm.internal;

import java.nio.file.Path;

import org.mpiproxy.api.ChannelManager;

/** Gives the benchmarks the channel manager the distribution uses, without OSGi. */
public final class BenchmarkChannels {

    private BenchmarkChannels() {
    }

    /**
     * @param baseDirectory directory of the job directories
     * @param ringCapacity  bytes of each ring's data area, a power of two
     * @return the mapped-file channel manager of the {@code channel-shm} bundle
     */
    public static ChannelManager mappedFiles(Path baseDirectory, int ringCapacity) {
        return new MappedFileChannelManager(baseDirectory, ringCapacity);
    }
}
