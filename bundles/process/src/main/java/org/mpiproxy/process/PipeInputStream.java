package org.mpiproxy.process;

import java.io.IOException;
import java.io.InputStream;

import com.sun.jna.Memory;
import com.sun.jna.Native;

/**
 * The reading end of a pipe {@link NativeSpawn} made, as a stream that keeps its descriptor: the
 * {@link OutputPoller} reads the descriptor itself; {@link #read} waits in {@code read(2)} (for a
 * stream read on a thread of its own). One reading thread.
 */
final class PipeInputStream extends InputStream implements OutputPoller.Source {

    private final NativeSpawn.LibC libc;
    private final int fd;
    private Memory buffer;
    private boolean closed;

    /**
     * @param libc the C library
     * @param fd   the pipe's reading end, owned by this stream from now on
     */
    PipeInputStream(NativeSpawn.LibC libc, int fd) {
        this.libc = libc;
        this.fd = fd;
    }

    @Override
    public int fd() {
        return fd;
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (len == 0) {
            return 0;
        }
        if (closed) {
            return -1;
        }
        if (buffer == null || buffer.size() < len) {
            buffer = new Memory(len);
        }
        while (true) {
            long n = libc.read(fd, buffer, len);
            if (n > 0) {
                buffer.read(0, b, off, (int) n);
                return (int) n;
            }
            if (n == 0) {
                return -1;
            }
            int errno = Native.getLastError();
            if (errno != NativeSpawn.EINTR) {
                throw new IOException("read: " + libc.strerror(errno));
            }
        }
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            libc.close(fd);
        }
    }
}
