package org.mpiproxy.mpi.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.protocol.MpiErrors;

class LaunchArgumentsTest {

    @Test
    void shouldParseRankCommandLine() {
        LaunchArguments a = LaunchArguments.parse(new String[] {"--slave", "/x/rank-2.chan", "2", "3", "100", "y"});

        assertTrue(a.isRank());
        assertEquals(Path.of("/x/rank-2.chan"), a.channelFile());
        assertEquals(2, a.rank());
        assertEquals(3, a.worldSize());
        assertEquals(List.of("100", "y"), a.programArgs());
    }

    @Test
    void shouldParseHostCommandLine() {
        LaunchArguments a = LaunchArguments.parse(new String[] {"hosts", "100"});

        assertFalse(a.isRank());
        assertEquals(Path.of("hosts"), a.hostfile());
        assertEquals(0, a.rank());
        assertEquals(List.of("100"), a.programArgs());
    }

    @Test
    void shouldRejectMissingHostfileAndBadRankLines() {
        assertEquals(MpiErrors.ERR_ARG, code(new String[0]));
        assertEquals(MpiErrors.ERR_ARG, code(new String[] {"--slave", "f", "1"}));
        assertEquals(MpiErrors.ERR_ARG, code(new String[] {"--slave", "f", "one", "2"}));
        assertEquals(MpiErrors.ERR_RANK, code(new String[] {"--slave", "f", "0", "2"}));
        assertEquals(MpiErrors.ERR_RANK, code(new String[] {"--slave", "f", "2", "2"}));
        assertEquals(MpiErrors.ERR_RANK, code(new String[] {"--slave", "f", "1", "65536"}));
    }

    @Test
    void shouldTellProgramArgumentsWithoutParsingStrictly() {
        assertEquals(List.of(), LaunchArguments.programArguments(new String[0]));
        assertEquals(List.of(), LaunchArguments.programArguments(new String[] {"hosts"}));
        assertEquals(List.of("7"), LaunchArguments.programArguments(new String[] {"hosts", "7"}));
        assertEquals(List.of("7"), LaunchArguments.programArguments(new String[] {"--slave", "f", "1", "2", "7"}));
    }

    private static int code(String[] args) {
        return assertThrows(MpiException.class, () -> LaunchArguments.parse(args)).errorCode();
    }

    @Test
    void shouldTakeARankStartedAsGivenFromItsEnvironment() {
        java.util.Map<String, String> env = java.util.Map.of("MPIPROXY_CHANNEL", "/x/rank-2.chan",
                "MPIPROXY_RANK", "2", "MPIPROXY_WORLD_SIZE", "4");
        LaunchArguments a = LaunchArguments.fromEnvironment(env::get, new String[] {"100", "--slave"});

        assertTrue(a.isRank());
        assertEquals(Path.of("/x/rank-2.chan"), a.channelFile());
        assertEquals(2, a.rank());
        assertEquals(4, a.worldSize());
        assertEquals(List.of("100", "--slave"), a.programArgs(), "every argument is the program's own");
        assertEquals(null, LaunchArguments.fromEnvironment(java.util.Map.<String, String>of()::get, new String[0]));
    }

    @Test
    void shouldRefuseAnIncompleteOrWrongRankEnvironment() {
        MpiException missing = assertThrows(MpiException.class, () -> LaunchArguments.fromEnvironment(
                java.util.Map.of("MPIPROXY_CHANNEL", "/c", "MPIPROXY_RANK", "1")::get, new String[0]));
        assertEquals(MpiErrors.ERR_ARG, missing.errorCode());
        assertTrue(missing.getMessage().contains("MPIPROXY_WORLD_SIZE is not"), missing.getMessage());
        MpiException range = assertThrows(MpiException.class, () -> LaunchArguments.fromEnvironment(
                java.util.Map.of("MPIPROXY_CHANNEL", "/c", "MPIPROXY_RANK", "4", "MPIPROXY_WORLD_SIZE", "4")::get,
                new String[0]));
        assertEquals(MpiErrors.ERR_RANK, range.errorCode());
    }
}
