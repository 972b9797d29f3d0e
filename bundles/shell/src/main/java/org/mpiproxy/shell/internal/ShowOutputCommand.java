package org.mpiproxy.shell.internal;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.function.BooleanSupplier;

import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.ProxyStatus;
import org.mpiproxy.api.RankInfo;

/** {@code mpi:output}: prints or follows a rank's standard output or error. */
@Service
@Command(scope = "mpi", name = "output", description = "Prints a rank's standard output (or error) as kept in the "
        + "proxy's log directory; --follow keeps printing until the rank ends or Ctrl-C.")
public class ShowOutputCommand extends MpiCommandSupport {

    /** Most bytes printed from the end of a file when asked for its last lines. */
    static final int TAIL_WINDOW = 1 << 20;
    static final Duration FOLLOW_PERIOD = Duration.ofMillis(200);

    @Argument(index = 0, name = "job", required = true, description = "Job id (or a unique prefix), see mpi:jobs")
    @Completion(JobIdCompleter.class)
    String job;

    @Argument(index = 1, name = "rank", required = true, description = "Rank id")
    @Completion(RankIdCompleter.class)
    int rank;

    @Option(name = "--follow", aliases = "-f", description = "Keep printing new output until the rank ends")
    boolean follow;

    @Option(name = "--stderr", aliases = "-e", description = "Standard error instead of standard output")
    boolean stderr;

    @Option(name = "-n", aliases = "--lines", description = "Print only the last N lines first (0: everything)")
    int lines;

    @Override
    protected Object doExecute(ProxyStatus status) throws IOException, InterruptedException {
        if (lines < 0) {
            throw new IllegalArgumentException("-n " + lines + " must be >= 0");
        }
        JobInfo info = resolveJob(status, job);
        resolveRank(info, rank);
        Path file = control().outputFile(info.jobId(), rank, stderr);
        long jobId = info.jobId();
        print(file, System.out, () -> running(status, jobId, rank));
        return null;
    }

    private static boolean running(ProxyStatus status, long jobId, int rankId) {
        for (JobInfo j : status.jobs()) {
            if (j.jobId() == jobId) {
                for (RankInfo r : j.ranks()) {
                    if (r.rankId() == rankId) {
                        return r.state() == RankInfo.State.RUNNING || r.state() == RankInfo.State.TERMINATING;
                    }
                }
            }
        }
        return false;
    }

    /**
     * Prints the file (its last {@link #lines} lines when set); with {@link #follow}, keeps
     * printing what is appended while {@code running} says the rank runs.
     */
    void print(Path file, PrintStream out, BooleanSupplier running) throws IOException, InterruptedException {
        if (!Files.exists(file)) {
            if (!follow) {
                throw new IllegalArgumentException("no output file " + file + " (the rank has written nothing yet, "
                        + "or the job's logs were removed)");
            }
            while (!Files.exists(file) && running.getAsBoolean()) {
                Thread.sleep(FOLLOW_PERIOD.toMillis());
            }
            if (!Files.exists(file)) {
                return;
            }
        }
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long position = lines > 0 ? startOfLastLines(ch, lines) : 0;
            position = copy(ch, position, out);
            while (follow) {
                boolean alive = running.getAsBoolean();
                position = copy(ch, position, out);
                if (!alive) {
                    break;
                }
                Thread.sleep(FOLLOW_PERIOD.toMillis());
            }
        }
        out.flush();
    }

    private static long copy(FileChannel ch, long position, PrintStream out) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(8192);
        long p = position;
        while (true) {
            buffer.clear();
            int n = ch.read(buffer, p);
            if (n <= 0) {
                return p;
            }
            out.write(buffer.array(), 0, n);
            p += n;
        }
    }

    /** @return where the last {@code count} lines start, looking at most {@link #TAIL_WINDOW} bytes back */
    static long startOfLastLines(FileChannel ch, int count) throws IOException {
        long size = ch.size();
        long from = Math.max(0, size - TAIL_WINDOW);
        ByteBuffer b = ByteBuffer.allocate((int) (size - from));
        int read;
        do {
            read = ch.read(b, from + b.position());
        } while (read > 0 && b.hasRemaining());
        byte[] bytes = b.array();
        int end = b.position();
        int newlines = 0;
        // a final newline ends the last line, it does not start another
        int i = end - 1;
        if (i >= 0 && bytes[i] == '\n') {
            i--;
        }
        for (; i >= 0; i--) {
            if (bytes[i] == '\n' && ++newlines == count) {
                return from + i + 1;
            }
        }
        return from;
    }
}
