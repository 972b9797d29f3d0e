package org.mpiproxy.protocol.pmi;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Who is at the other end of a loopback TCP connection: the kernel lists every socket with its
 * owner's uid in {@code /proc/net/tcp} (and {@code tcp6}); the client's socket is the one whose
 * local port is the connection's remote port and whose remote port is ours. And which uid a
 * process runs as ({@code /proc/<pid>/status}). Linux only; stateless.
 */
final class PeerCredentials {

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
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            List<String> lines;
            try {
                lines = Files.readAllLines(Path.of(table));
            } catch (IOException e) {
                continue;
            }
            for (int i = 1; i < lines.size(); i++) {
                String[] f = lines.get(i).trim().split("\\s+");
                // sl local_address rem_address st tx:rx tr:when retrnsmt uid ...
                if (f.length > 7 && f[1].endsWith(local) && f[2].endsWith(remote)) {
                    try {
                        return Long.parseLong(f[7]);
                    } catch (NumberFormatException e) {
                        return -1;
                    }
                }
            }
        }
        return -1;
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
