package org.mpiproxy.api;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Receives what ranks write to their standard output and error, line by line.
 * <p>
 * Whiteboard: register it as a service and every launcher calls it for the ranks it starts
 * from then on. Each call carries one whole line without its newline, tagged with job, rank and
 * stream, in the order the rank wrote them per stream; a line is never split or interleaved with
 * another. In raw mode (for programs that prompt without a newline) text is delivered as soon
 * as it arrives, marked {@code partial} when it does not end a line. Called on the launcher's
 * output threads, one per rank and stream, concurrently for different ranks: implementations are
 * thread-safe and return quickly (a slow listener slows the rank's writes, never loses them).
 */
@ConsumerType
public interface RankOutputListener {

    /** Which stream a line came from. */
    enum Stream {
        /** standard output */
        STDOUT,
        /** standard error */
        STDERR
    }

    /**
     * @param jobId   the job
     * @param rankId  the rank
     * @param stream  the stream
     * @param text    the line without its line end, or raw text
     * @param partial {@code true} for raw text that does not end a line (raw mode, or the last
     *                bytes of a stream that ended without a newline)
     */
    void onOutput(long jobId, int rankId, Stream stream, String text, boolean partial);

    /**
     * Called once when a stream has ended (the rank closed it or exited), after its last
     * {@link #onOutput}. The default does nothing.
     *
     * @param jobId  the job
     * @param rankId the rank
     * @param stream the stream that ended
     */
    default void onEnd(long jobId, int rankId, Stream stream) {
    }
}
