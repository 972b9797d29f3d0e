package org.mpiproxy.proxy.internal;

import org.mpiproxy.protocol.V2HeaderDescriptor;

/** Sends one OUTPUT fragment to the job's owner; relay thread, under the dispatcher's lock. */
interface V2OutputSender {
    /**
     * @param jobId     the job
     * @param rankId    the rank
     * @param stream    {@link V2HeaderDescriptor#STREAM_STDOUT} or {@link V2HeaderDescriptor#STREAM_STDERR}
     * @param sequence  the fragment's sequence number
     * @param dropped   lines of this stream dropped so far
     * @param endOfLine the fragment is its line's last
     * @param partial   the line has no line end
     * @param text      the line's bytes
     * @param offset    first byte of the fragment
     * @param length    bytes of the fragment
     */
    void send(long jobId, int rankId, int stream, long sequence, long dropped, boolean endOfLine, boolean partial,
              byte[] text, int offset, int length);
}
