package org.mpiproxy.shell.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import org.mpiproxy.channel.shm.ChannelDescriptor;
import org.mpiproxy.channel.shm.RingDescriptor;

/**
 * Reads channel files as an outside observer (plain reads, no mapping): which files exist and
 * how full each ring is. Values may be a moment old; they are for operators only.
 */
final class ChannelFiles {

    /** What one channel file says about itself. */
    record Channel(Path file, long jobId, int rankId, long size, int capacity, long toRankUsed, long fromRankUsed) {

        /** @return fill of the host-to-rank ring in percent */
        int toRankPercent() {
            return percent(toRankUsed);
        }

        /** @return fill of the rank-to-host ring in percent */
        int fromRankPercent() {
            return percent(fromRankUsed);
        }

        private int percent(long used) {
            return capacity <= 0 ? 0 : (int) Math.min(100, used * 100 / capacity);
        }
    }

    private ChannelFiles() {
    }

    /** @return every readable channel file below {@code base}, by job and rank */
    static List<Channel> list(Path base) throws IOException {
        List<Channel> channels = new ArrayList<>();
        if (base == null || !Files.isDirectory(base)) {
            return channels;
        }
        try (DirectoryStream<Path> jobs = Files.newDirectoryStream(base, "job-*")) {
            for (Path job : jobs) {
                if (!Files.isDirectory(job)) {
                    continue;
                }
                try (DirectoryStream<Path> files = Files.newDirectoryStream(job, "*" + ChannelDescriptor.FILE_SUFFIX)) {
                    for (Path f : files) {
                        Channel c = read(f);
                        if (c != null) {
                            channels.add(c);
                        }
                    }
                }
            }
        }
        channels.sort(Comparator.comparingLong(Channel::jobId).thenComparingInt(Channel::rankId));
        return channels;
    }

    /** @return the file's header and ring fill, or {@code null} when it is not a (complete) channel file */
    static Channel read(Path file) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer header = ByteBuffer.allocate(ChannelDescriptor.FILE_HEADER_LENGTH).order(ByteOrder.nativeOrder());
            if (ch.read(header, 0) < ChannelDescriptor.FILE_HEADER_LENGTH
                    || header.getLong(ChannelDescriptor.MAGIC_OFFSET) != ChannelDescriptor.MAGIC) {
                return null;
            }
            int capacity = header.getInt(ChannelDescriptor.RING_CAPACITY_OFFSET);
            long toRank = used(ch, header.getLong(ChannelDescriptor.TO_RANK_OFFSET_OFFSET));
            long fromRank = used(ch, header.getLong(ChannelDescriptor.FROM_RANK_OFFSET_OFFSET));
            return new Channel(file, header.getLong(ChannelDescriptor.JOB_ID_OFFSET),
                    header.getInt(ChannelDescriptor.RANK_ID_OFFSET), ch.size(), capacity, toRank, fromRank);
        } catch (IOException e) {
            return null;
        }
    }

    private static long used(FileChannel ch, long ringOffset) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(RingDescriptor.RING_HEADER_LENGTH).order(ByteOrder.nativeOrder());
        ch.read(b, ringOffset);
        long tail = b.getLong(RingDescriptor.TAIL_POSITION_OFFSET);
        long head = b.getLong(RingDescriptor.HEAD_POSITION_OFFSET);
        return Math.max(0, tail - head);
    }
}
