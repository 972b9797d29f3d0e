/**
 * Shared-memory channels between the proxy and its ranks: single-producer/single-consumer
 * rings of typed records over a memory-mapped file, their layout, and the idle strategy used
 * by both sides.
 * <p>
 * The package depends on the JDK and {@code org.mpiproxy.api} only, so rank programs use it as
 * a plain jar: a rank opens its channel with {@link org.mpiproxy.channel.shm.MappedRankChannel#map}
 * on the file named by its command line ({@code --slave <channel-file>}) or by the
 * {@code MPIPROXY_CHANNEL} environment variable, consumes {@code toRank()} and produces into
 * {@code fromRank()}. The layout is described in {@link org.mpiproxy.channel.shm.ChannelDescriptor}
 * and {@link org.mpiproxy.channel.shm.RingDescriptor}.
 */
@Export
@Version("0.2.0")
package org.mpiproxy.channel.shm;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
