package org.mpiproxy.shell.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.karaf.shell.api.console.CommandLine;
import org.apache.karaf.shell.api.console.Completer;
import org.junit.jupiter.api.Test;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.RankInfo;

class CompletersTest {

    /** The command line {@code words}, the cursor at the end of the last word. */
    private static CommandLine line(String... words) {
        String buffer = String.join(" ", words);
        return new CommandLine() {
            @Override
            public int getCursorArgumentIndex() {
                return words.length - 1;
            }

            @Override
            public String getCursorArgument() {
                return words[words.length - 1];
            }

            @Override
            public int getArgumentPosition() {
                return words[words.length - 1].length();
            }

            @Override
            public String[] getArguments() {
                return words;
            }

            @Override
            public int getBufferPosition() {
                return buffer.length();
            }

            @Override
            public String getBuffer() {
                return buffer;
            }
        };
    }

    private static List<String> complete(Completer completer, String... words) {
        List<String> candidates = new ArrayList<>();
        completer.complete(null, line(words), candidates);
        return candidates.stream().map(String::trim).sorted().toList();
    }

    private static JobInfo job(long id, int... ranks) {
        List<RankInfo> list = new ArrayList<>();
        for (int r : ranks) {
            list.add(new RankInfo(r, 0, "p", 1, RankInfo.State.RUNNING, -1, 0, 0, 0, 0));
        }
        return new JobInfo(id, "v1", "h:1", Instant.EPOCH, list);
    }

    @Test
    void shouldCompleteJobIdsByPrefix() {
        JobIdCompleter completer = new JobIdCompleter();
        completer.status = Stubs.status(List.of(job(0xab00000000000001L, 1), job(0xcd00000000000002L, 1)), Map.of());
        assertEquals(List.of("ab00000000000001"), complete(completer, "mpi:job", "ab"));
        assertEquals(List.of("ab00000000000001", "cd00000000000002"), complete(completer, "mpi:job", ""));
    }

    @Test
    void shouldCompleteTheRanksOfTheJobNamedBefore() {
        RankIdCompleter completer = new RankIdCompleter();
        completer.status = Stubs.status(List.of(job(0xab00000000000001L, 1, 2), job(0xcd00000000000002L, 3)),
                Map.of());
        assertEquals(List.of("1", "2"), complete(completer, "mpi:stop", "ab", ""));
        assertEquals(List.of("1", "2", "3"), complete(completer, "mpi:stop", "ff", ""));
    }

    @Test
    void shouldCompleteProgramNames() {
        ProgramCompleter completer = new ProgramCompleter();
        completer.control = new Stubs.Control();
        assertEquals(List.of("mpiping", "mpiprime"), complete(completer, "mpi:exec", "mpi"));
    }
}
