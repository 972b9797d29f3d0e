package org.mpiproxy.channel.shm;

import static org.mpiproxy.channel.shm.ChannelDescriptor.FILE_HEADER_LENGTH;
import static org.mpiproxy.channel.shm.ChannelDescriptor.FILE_HEADER_LENGTH_OFFSET;
import static org.mpiproxy.channel.shm.ChannelDescriptor.FILE_LENGTH_OFFSET;
import static org.mpiproxy.channel.shm.ChannelDescriptor.FROM_RANK_OFFSET_OFFSET;
import static org.mpiproxy.channel.shm.ChannelDescriptor.JOB_ID_OFFSET;
import static org.mpiproxy.channel.shm.ChannelDescriptor.MAGIC;
import static org.mpiproxy.channel.shm.ChannelDescriptor.MAGIC_OFFSET;
import static org.mpiproxy.channel.shm.ChannelDescriptor.MAJOR_VERSION;
import static org.mpiproxy.channel.shm.ChannelDescriptor.RANK_ID_OFFSET;
import static org.mpiproxy.channel.shm.ChannelDescriptor.RING_CAPACITY_OFFSET;
import static org.mpiproxy.channel.shm.ChannelDescriptor.RING_HEADER_LENGTH_OFFSET;
import static org.mpiproxy.channel.shm.ChannelDescriptor.TO_RANK_OFFSET_OFFSET;
import static org.mpiproxy.channel.shm.ChannelDescriptor.VERSION;
import static org.mpiproxy.channel.shm.ChannelDescriptor.VERSION_OFFSET;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileChannel.MapMode;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

import org.mpiproxy.api.RankChannel;

/**
 * The channel between the proxy and one rank: a memory-mapped file laid out as
 * {@link ChannelDescriptor} describes, holding the {@link #toRank()} and {@link #fromRank()}
 * rings.
 * <p>
 * The proxy {@link #create creates} the file; the rank {@link #map maps} it with the path it
 * received ({@code --slave <channel-file>} or {@code MPIPROXY_CHANNEL}), then consumes
 * {@code toRank()} and produces into {@code fromRank()}.
 * <p>
 * Thread-safety: the rings follow {@link org.mpiproxy.api.MessageRing}'s rules; the other
 * accessors may be called from any thread. {@link #close()} must not race with ring operations.
 */
public final class MappedRankChannel implements RankChannel {

    private static final VarHandle INT = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());

    private final Path path;
    private final long jobId;
    private final int rankId;
    private final int ringCapacity;
    private final int version;
    private final MappedMessageRing toRank;
    private final MappedMessageRing fromRank;
    private volatile boolean closed;

    private MappedRankChannel(Path path, ByteBuffer header, MappedMessageRing toRank, MappedMessageRing fromRank) {
        this.path = path;
        this.jobId = header.getLong(JOB_ID_OFFSET);
        this.rankId = header.getInt(RANK_ID_OFFSET);
        this.ringCapacity = header.getInt(RING_CAPACITY_OFFSET);
        this.version = (int) INT.getAcquire(header, VERSION_OFFSET);
        this.toRank = toRank;
        this.fromRank = fromRank;
    }

    /**
     * Creates a new channel file (never overwriting one) readable and writable by its owner
     * only (0600 where the file system supports POSIX permissions), sized for two rings of
     * {@code ringCapacity} bytes, with empty rings; the header's version is written last.
     *
     * @param file         the channel file; its directory must exist
     * @param ringCapacity capacity of each ring's data area, a power of two between
     *                     {@link RingDescriptor#MIN_CAPACITY} and {@link RingDescriptor#MAX_CAPACITY}
     * @param jobId        the job
     * @param rankId       the rank, &gt;= 0
     * @return the mapped channel
     * @throws java.nio.file.FileAlreadyExistsException when the file exists
     * @throws IOException              when the file cannot be created, sized or mapped (it is
     *                                  then removed again)
     * @throws IllegalArgumentException when the capacity or rank id is invalid
     */
    public static MappedRankChannel create(Path file, int ringCapacity, long jobId, int rankId) throws IOException {
        Objects.requireNonNull(file, "file");
        if (!RingDescriptor.isValidCapacity(ringCapacity)) {
            throw new IllegalArgumentException("ringCapacity=" + ringCapacity + " must be a power of two between "
                + RingDescriptor.MIN_CAPACITY + " and " + RingDescriptor.MAX_CAPACITY);
        }
        if (rankId < 0) {
            throw new IllegalArgumentException("rankId=" + rankId + " must be >= 0");
        }
        final long fileLength = ChannelDescriptor.fileLength(ringCapacity);
        final long toRankOffset = ChannelDescriptor.toRankOffset(ringCapacity);
        final long fromRankOffset = ChannelDescriptor.fromRankOffset(ringCapacity);
        // CREATE_NEW (O_CREAT | O_EXCL) never follows a symbolic link: one in the file's place fails the create
        FileChannel channel = FileChannel.open(file,
            Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS),
            ownerOnly(file));
        boolean done = false;
        try (channel) {
            // sparse on tmpfs: pages are allocated when first touched
            channel.write(ByteBuffer.allocate(1), fileLength - 1);
            MappedByteBuffer header = channel.map(MapMode.READ_WRITE, 0, FILE_HEADER_LENGTH);
            header.order(ByteOrder.nativeOrder());
            MappedMessageRing toRank = new MappedMessageRing(mapRing(channel, toRankOffset, ringCapacity));
            MappedMessageRing fromRank = new MappedMessageRing(mapRing(channel, fromRankOffset, ringCapacity));
            // the creator (the proxy) writes the host-to-rank ring and rings its doorbell
            toRank.producerRingsDoorbell(true);

            header.putInt(FILE_HEADER_LENGTH_OFFSET, FILE_HEADER_LENGTH);
            header.putLong(JOB_ID_OFFSET, jobId);
            header.putInt(RANK_ID_OFFSET, rankId);
            header.putInt(RING_CAPACITY_OFFSET, ringCapacity);
            header.putLong(TO_RANK_OFFSET_OFFSET, toRankOffset);
            header.putLong(FROM_RANK_OFFSET_OFFSET, fromRankOffset);
            header.putInt(RING_HEADER_LENGTH_OFFSET, RingDescriptor.RING_HEADER_LENGTH);
            header.putLong(FILE_LENGTH_OFFSET, fileLength);
            header.putLong(MAGIC_OFFSET, MAGIC);
            // release: every other header field must be visible before the version
            INT.setRelease(header, VERSION_OFFSET, VERSION);
            done = true;
            return new MappedRankChannel(file, header, toRank, fromRank);
        } finally {
            if (!done) {
                Files.deleteIfExists(file);
            }
        }
    }

    /**
     * Maps an existing channel file, after checking its magic, major version, capacity, ring
     * offsets and length. The file is opened without following a symbolic link: a link in its
     * place fails the open.
     *
     * @param file the channel file, not a symbolic link
     * @return the mapped channel
     * @throws IOException when the file cannot be opened or mapped, is a symbolic link, or is not a
     *                     valid channel file; the message names the file and what is wrong
     */
    public static MappedRankChannel map(Path file) throws IOException {
        Objects.requireNonNull(file, "file");
        try (FileChannel channel = openNoFollow(file)) {
            final long size = channel.size();
            if (size < FILE_HEADER_LENGTH) {
                throw invalid(file, "is truncated: " + size + " bytes, shorter than the "
                    + FILE_HEADER_LENGTH + "-byte header");
            }
            MappedByteBuffer header = channel.map(MapMode.READ_WRITE, 0, FILE_HEADER_LENGTH);
            header.order(ByteOrder.nativeOrder());
            // acquire: pairs with the creator's release of the version
            final int version = (int) INT.getAcquire(header, VERSION_OFFSET);
            final long magic = header.getLong(MAGIC_OFFSET);
            if (magic != MAGIC) {
                throw invalid(file, "is not a channel file: magic 0x" + Long.toHexString(magic)
                    + ", expected 0x" + Long.toHexString(MAGIC));
            }
            if (version == 0) {
                throw invalid(file, "is not initialised yet (version 0)");
            }
            final int major = ChannelDescriptor.majorVersion(version);
            if (major != MAJOR_VERSION) {
                throw invalid(file, "has layout version " + major + "." + ChannelDescriptor.minorVersion(version)
                    + "; this reader supports major version " + MAJOR_VERSION);
            }
            final int capacity = header.getInt(RING_CAPACITY_OFFSET);
            if (!RingDescriptor.isValidCapacity(capacity)) {
                throw invalid(file, "has an invalid ring capacity " + capacity);
            }
            final long expectedLength = ChannelDescriptor.fileLength(capacity);
            final long toRankOffset = header.getLong(TO_RANK_OFFSET_OFFSET);
            final long fromRankOffset = header.getLong(FROM_RANK_OFFSET_OFFSET);
            if (header.getInt(FILE_HEADER_LENGTH_OFFSET) != FILE_HEADER_LENGTH
                || header.getInt(RING_HEADER_LENGTH_OFFSET) != RingDescriptor.RING_HEADER_LENGTH
                || toRankOffset != ChannelDescriptor.toRankOffset(capacity)
                || fromRankOffset != ChannelDescriptor.fromRankOffset(capacity)
                || header.getLong(FILE_LENGTH_OFFSET) != expectedLength) {
                throw invalid(file, "has an inconsistent header: headerLength=" + header.getInt(FILE_HEADER_LENGTH_OFFSET)
                    + " ringHeaderLength=" + header.getInt(RING_HEADER_LENGTH_OFFSET)
                    + " toRankOffset=" + toRankOffset + " fromRankOffset=" + fromRankOffset
                    + " fileLength=" + header.getLong(FILE_LENGTH_OFFSET) + " for ringCapacity=" + capacity);
            }
            if (size < expectedLength) {
                throw invalid(file, "is truncated: " + size + " bytes, its header declares " + expectedLength);
            }
            MappedMessageRing toRank = new MappedMessageRing(mapRing(channel, toRankOffset, capacity));
            MappedMessageRing fromRank = new MappedMessageRing(mapRing(channel, fromRankOffset, capacity));
            return new MappedRankChannel(file, header, toRank, fromRank);
        }
    }

    @Override
    public long jobId() {
        return jobId;
    }

    @Override
    public int rankId() {
        return rankId;
    }

    @Override
    public Path path() {
        return path;
    }

    /** @return capacity of each ring's data area in bytes */
    public int ringCapacity() {
        return ringCapacity;
    }

    /** @return the layout version word of the file, {@code major << 16 | minor} */
    public int version() {
        return version;
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalStateException when the channel is closed
     */
    @Override
    public MappedMessageRing toRank() {
        checkOpen();
        return toRank;
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalStateException when the channel is closed
     */
    @Override
    public MappedMessageRing fromRank() {
        checkOpen();
        return fromRank;
    }

    /** @return {@code true} after {@link #close()} */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Marks the channel closed. The JDK offers no supported way to unmap a
     * {@link MappedByteBuffer}: the mapping is released when neither this channel nor its rings
     * are reachable any more, so callers must drop their ring references too and must not use
     * them after closing. The file stays.
     */
    @Override
    public void close() {
        closed = true;
    }

    @Override
    public String toString() {
        return "MappedRankChannel[job=" + ChannelDescriptor.jobDirectoryName(jobId) + ", rank=" + rankId
            + ", ringCapacity=" + ringCapacity + ", path=" + path + "]";
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("channel " + path + " is closed");
        }
    }

    /** Opens the file itself: a symbolic link put in its place fails the open (O_NOFOLLOW) instead of being followed. */
    private static FileChannel openNoFollow(Path file) throws IOException {
        try {
            return FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            if (Files.isSymbolicLink(file)) {
                throw invalid(file, "is a symbolic link; refusing to follow it");
            }
            throw e;
        }
    }

    private static MappedByteBuffer mapRing(FileChannel channel, long offset, int capacity) throws IOException {
        return channel.map(MapMode.READ_WRITE, offset, RingDescriptor.ringLength(capacity));
    }

    private static FileAttribute<?>[] ownerOnly(Path file) {
        if (!file.getFileSystem().supportedFileAttributeViews().contains("posix")) {
            return new FileAttribute<?>[0];
        }
        return new FileAttribute<?>[] {
            PosixFilePermissions.asFileAttribute(EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE))
        };
    }

    private static IOException invalid(Path file, String problem) {
        return new IOException("channel file " + file + " " + problem);
    }
}
