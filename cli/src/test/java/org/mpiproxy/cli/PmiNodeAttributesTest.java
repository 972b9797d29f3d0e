package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.mpiproxy.protocol.pmi.Pmi2Wire;
import org.mpiproxy.protocol.pmi.PmiLine;
import org.mpiproxy.protocol.pmi.PmiServer;

/**
 * A node attribute a rank puts (PMI-2) reaches the job's other servers on its machine at once:
 * the proxies of that machine, and the launcher's own server when it is the launcher's machine;
 * no other machine's.
 */
class PmiNodeAttributesTest {

    private static final long JOB = 0x5L;
    private static final Placement HERE = new Placement("127.0.0.1", 6660, 0, "here");
    private static final Placement HERE_TOO = new Placement("127.0.0.1", 6661, 0, "here-too");
    private static final Placement B = new Placement("198.51.100.1", 6660, 0, "b");

    /** @return the body of the server's next PMI-2 message */
    private static String message(DataInputStream in) throws Exception {
        byte[] field = new byte[Pmi2Wire.LENGTH_FIELD];
        in.readFully(field);
        byte[] body = new byte[Pmi2Wire.length(new String(field, StandardCharsets.ISO_8859_1))];
        in.readFully(body);
        return new String(body, StandardCharsets.UTF_8);
    }

    @Test
    void shouldCarryANodeAttributeToTheOtherServersOfItsMachineOnly() throws Exception {
        List<String> sent = new ArrayList<>();
        List<String> problems = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (PmiServer local = new PmiServer((job, rank, line) -> true, problems::add)) {
            // rank 0 here: this test's own process speaks PMI-2 for it
            Map<String, String> env = local.register(JOB, 0, 6);
            local.started(JOB, 0, ProcessHandle.current().pid());
            PmiNodeAttributes attributes = new PmiNodeAttributes(JOB, List.of(HERE, HERE_TOO, B, B, HERE),
                    (number, pairs, nodes) -> sent.add(number + " " + new String(pairs, StandardCharsets.UTF_8)
                            .replace('\0', '|') + " to " + nodes), local);
            PmiFence fence = new PmiFence(6, (epoch, pairs) -> { }, attributes, () -> { });

            assertNull(fence.onLine(3, PmiLine.pairLine("putnodeattr", "shm", "segment b")));
            assertEquals(List.of("0 shm=segment b| to [" + new InetSocketAddress("198.51.100.1", 6660) + "]"), sent);
            assertNull(fence.onLine(2, PmiLine.pairLine("putnodeattr", "shm", "segment 0")));
            assertEquals("1 shm=segment 0| to [" + new InetSocketAddress("127.0.0.1", 6660) + ", "
                    + new InetSocketAddress("127.0.0.1", 6661) + "]", sent.get(1));
            assertEquals("PMI putnodeattr without key= or value= of rank 2", fence.onLine(2, "cmd=putnodeattr key=k"));

            String port = env.get("PMI_PORT");
            try (Socket s = new Socket("127.0.0.1", Integer.parseInt(port.substring(port.indexOf(':') + 1)))) {
                s.setSoTimeout((int) TimeUnit.SECONDS.toMillis(60));
                OutputStream out = s.getOutputStream();
                DataInputStream in = new DataInputStream(s.getInputStream());
                out.write("cmd=init pmi_version=2 pmi_subversion=0\n".getBytes(StandardCharsets.UTF_8));
                while (in.read() != '\n') {
                    continue;
                }
                out.write(Pmi2Wire.format("fullinit", "pmiid", env.get("PMI_ID")).getBytes(StandardCharsets.UTF_8));
                message(in);
                out.write(Pmi2Wire.format("info-getnodeattr", "key", "shm", "wait", "TRUE")
                        .getBytes(StandardCharsets.UTF_8));
                assertEquals("cmd=info-getnodeattr-response;rc=0;found=TRUE;value=segment 0;", message(in),
                        "rank 2's attribute (the launcher's machine), not rank 3's");
                out.write(Pmi2Wire.format("finalize").getBytes(StandardCharsets.UTF_8));
                assertEquals("cmd=finalize-response;rc=0;", message(in));
            }
        }
        assertEquals(List.of(), problems);
    }
}
