package org.mpiproxy.mpi;

import java.io.PrintStream;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Receives, on the host (rank 0), what the other ranks write to their standard output and
 * error: over protocol v2 the proxies stream every line (docs/protocol-v2.md 5.5). Lines of one
 * rank and stream arrive in the order written, each exactly once and whole; lines of different
 * ranks interleave line by line. Called on the host library's threads, one call at a time
 * (never concurrently): implementations return quickly, since a slow handler slows the
 * ranks' writes (back-pressure), never loses lines.
 */
@ConsumerType
public interface RankOutputHandler {

    /**
     * @param rank    the rank that wrote the line, 1 .. size-1
     * @param stderr  {@code true} for its standard error, {@code false} for its standard output
     * @param line    the line without its line end
     * @param partial {@code true} when the text has no line end: raw output, a piece of a line
     *                longer than 64 KiB (cut there by the proxy), or a stream's last bytes
     */
    void onLine(int rank, boolean stderr, String line, boolean partial);

    /**
     * Lines the rank's proxy dropped because this host acknowledged nothing for a long time
     * (30 s). The default does nothing.
     *
     * @param rank   the rank
     * @param stderr which of its streams
     * @param lines  lines dropped since the previous report
     */
    default void onDropped(int rank, boolean stderr, long lines) {
    }

    /**
     * The default of {@link Mpi#init(String[])}: each line as {@code [rank] line} on the given
     * streams, whole (a partial piece gets a line end too, so lines of different ranks never
     * mix); dropped lines are reported as {@code [rank] [mpiproxy: N lines dropped]}.
     *
     * @param out    receives the ranks' standard output
     * @param err    receives the ranks' standard error
     * @param prefix written before each line (the launcher's marker; usually empty)
     * @param tagged whether {@code [rank] } is written before each line
     * @return the handler
     */
    static RankOutputHandler printing(PrintStream out, PrintStream err, String prefix, boolean tagged) {
        return new RankOutputHandler() {
            @Override
            public void onLine(int rank, boolean stderr, String line, boolean partial) {
                PrintStream to = stderr ? err : out;
                String text = tagged ? prefix + "[" + rank + "] " + line : prefix + line;
                synchronized (to) {
                    to.println(text);
                }
            }

            @Override
            public void onDropped(int rank, boolean stderr, long lines) {
                onLine(rank, stderr, "[mpiproxy: " + lines + " lines dropped: the host acknowledged no output for"
                        + " too long]", false);
            }
        };
    }
}
