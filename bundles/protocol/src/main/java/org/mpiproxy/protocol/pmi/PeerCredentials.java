package org.mpiproxy.protocol.pmi;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Who is at the other end of a loopback TCP connection: the kernel lists every socket with its
 * owner's uid in {@code /proc/net/tcp} (and {@code tcp6}); the client's socket is the one whose
 * local port is the connection's remote port and whose remote port is ours. And which uid a
 * process runs as ({@code /proc/<pid>/status}). Linux only; stateless. Each look-up reads the
 * table whole, in time linear in the node's TCP sockets.
 */
final class PeerCredentials {

    /** 127.0.0.1 and ::ffff:127.0.0.1 as the tables print them, in either byte order of the kernel. */
    private static final Set<String> LOOPBACK = Set.of("0100007F", "7F000001", "0000000000000000FFFF00000100007F",
            "00000000000000000000FFFF7F000001");

    private PeerCredentials() {
    }

    /**
     * @param clientPort the connection's port on the client's side
     * @param serverPort our listening port
     * @return the uid that owns the client's socket, or -1 when it is not listed
     */
    static long uidOfClient(int clientPort, int serverPort) {
        String local = String.format(Locale.ROOT, ":%04X", clientPort);
        String remote = String.format(Locale.ROOT, ":%04X", serverPort);
        long[] uid = {-1};
        forEachSocket(f -> {
            if (uid[0] < 0 && f[1].endsWith(local) && f[2].endsWith(remote)) {
                uid[0] = Long.parseLong(f[7]);
            }
        });
        return uid[0];
    }

    /**
     * One reading of the kernel's tables for every client of a loopback server.
     *
     * @param serverPort our listening port, on 127.0.0.1
     * @return the uid owning each client socket connected to it from 127.0.0.1, by the client's port
     */
    static Map<Integer, Long> uidsOfClients(int serverPort) {
        String remote = String.format(Locale.ROOT, ":%04X", serverPort);
        Map<Integer, Long> uids = new HashMap<>();
        forEachSocket(f -> {
            if (f[2].endsWith(remote) && LOOPBACK.contains(f[2].substring(0, f[2].indexOf(':')))) {
                uids.putIfAbsent(Integer.parseInt(f[1].substring(f[1].lastIndexOf(':') + 1), 16), Long.parseLong(f[7]));
            }
        });
        return uids;
    }

    /**
     * Hands every socket line of {@code /proc/net/tcp} and {@code tcp6} to {@code row}, split into its
     * fields ({@code sl local_address rem_address st tx:rx tr:when retrnsmt uid ...}); a table that
     * cannot be read and a line of another form (a field that does not parse) are skipped.
     */
    private static void forEachSocket(Consumer<String[]> row) {
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            List<String> lines;
            try {
                lines = Files.readAllLines(Path.of(table));
            } catch (IOException e) {
                continue;
            }
            for (int i = 1; i < lines.size(); i++) {
                String[] f = lines.get(i).trim().split("\\s+");
                if (f.length > 7) {
                    try {
                        row.accept(f);
                    } catch (RuntimeException e) {
                        // a line of another form: not a socket of ours
                    }
                }
            }
        }
    }

    /** @return the real uid of a process, or -1 when it is gone */
    static long uidOfProcess(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("Uid:")) {
                    return Long.parseLong(line.substring(4).trim().split("\\s+")[0]);
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }
}
