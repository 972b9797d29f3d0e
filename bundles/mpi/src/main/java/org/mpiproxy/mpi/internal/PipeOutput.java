package org.mpiproxy.mpi.internal;

import java.io.BufferedOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import org.mpiproxy.mpi.RankOutputHandler;

/**
 * The ranks' output lines written to a named pipe the launcher reads ({@code mpiproxy run}), so
 * they never mix with rank 0's own, possibly block-buffered, output. Each line is one record:
 * {@code O} (stdout) or {@code E} (stderr), the line (with its {@code [rank] } tag when
 * tagged), {@code \n}. When the pipe cannot be written, lines go to {@code fallback}.
 * Called one line at a time (the host transport's lock).
 */
public final class PipeOutput implements RankOutputHandler {

    private final Path pipe;
    private final boolean tagged;
    private final RankOutputHandler fallback;
    private OutputStream out;
    private boolean broken;

    /**
     * @param pipe     the named pipe, opened at the first line
     * @param tagged   whether {@code [rank] } goes before each line
     * @param fallback where lines go when the pipe fails
     */
    public PipeOutput(Path pipe, boolean tagged, RankOutputHandler fallback) {
        this.pipe = pipe;
        this.tagged = tagged;
        this.fallback = fallback;
    }

    @Override
    public void onLine(int rank, boolean stderr, String line, boolean partial) {
        if (!broken) {
            try {
                if (out == null) {
                    out = new BufferedOutputStream(new FileOutputStream(pipe.toFile()), 8192);
                }
                String record = (stderr ? "E" : "O") + (tagged ? "[" + rank + "] " : "") + line.replace('\n', ' ')
                        + "\n";
                out.write(record.getBytes(StandardCharsets.UTF_8));
                out.flush();
                return;
            } catch (IOException e) {
                broken = true;
            }
        }
        fallback.onLine(rank, stderr, line, partial);
    }

    @Override
    public void onDropped(int rank, boolean stderr, long lines) {
        onLine(rank, stderr, "[mpiproxy: " + lines + " lines dropped: the host acknowledged no output for too long]",
                false);
    }
}
