package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V1HeaderDescriptor;
import org.mpiproxy.protocol.V1HeaderFlyweight;

class V1ControlTest {

    /** How long a call may take before the test counts it as hung; every call here returns on the answers. */
    private static final Duration CEILING = Duration.ofSeconds(60);

    /**
     * Answers TERMINATE: rank 1 exited 0, rank 2 unknown (ERR_RANK), rank 3 exited 9; EXEC with ERR_ARG.
     * Lists each request as {@code TERMINATE rank R from PORT} (or {@code EXEC ...}) in {@code requests}.
     */
    private static Thread answering(DatagramChannel proxy, List<String> requests) {
        Thread t = new Thread(() -> {
            ByteBuffer in = ByteBuffer.allocate(2048).order(V1HeaderDescriptor.BYTE_ORDER);
            V1HeaderFlyweight h = new V1HeaderFlyweight().wrap(in, 0);
            ByteBuffer out = ByteBuffer.allocate(V1HeaderDescriptor.HEADER_LENGTH).order(V1HeaderDescriptor.BYTE_ORDER);
            V1HeaderFlyweight r = new V1HeaderFlyweight().wrap(out, 0);
            try {
                while (true) {
                    InetSocketAddress source = (InetSocketAddress) proxy.receive(in.clear());
                    requests.add((h.operation() == V1HeaderDescriptor.OP_EXEC ? "EXEC" : "TERMINATE") + " rank "
                            + h.rankId() + " from " + source.getPort());
                    if (h.operation() == V1HeaderDescriptor.OP_EXEC) {
                        r.set(V1HeaderDescriptor.OP_EXEC, MpiErrors.ERR_ARG, h.rankId(), 0, 0, 0);
                    } else {
                        int rank = h.rankId();
                        r.set(V1HeaderDescriptor.OP_TERMINATE, rank == 2 ? MpiErrors.ERR_RANK : 0, rank, h.coreId(), 0,
                                rank == 3 ? 9 : 0);
                    }
                    proxy.send(out.clear(), source);
                }
            } catch (java.io.IOException e) {
                // closed: the test is over
            }
        });
        t.setDaemon(true);
        t.start();
        return t;
    }

    @Test
    void shouldTerminateUnknownRanksFromTheJobsPortAndCollectStatuses() throws Exception {
        try (DatagramChannel proxy = DatagramChannel.open()) {
            proxy.bind(new InetSocketAddress("127.0.0.1", 0));
            int port = ((InetSocketAddress) proxy.getLocalAddress()).getPort();
            List<String> requests = new CopyOnWriteArrayList<>();
            answering(proxy, requests);
            List<Placement> ranks = List.of(new Placement("127.0.0.1", port, 0, "a"),
                    new Placement("127.0.0.1", port, 1, "a"), new Placement("127.0.0.1", port, 0, "a"),
                    new Placement("127.0.0.1", port, 0, "a"));
            int hostPort = JobRunner.freeUdpPort();
            int[] statuses = {0, -1, -1, -1, 5};

            V1Control.terminate(hostPort, ranks, statuses, CEILING, () -> false);

            assertArrayEquals(new int[] {0, 0, V1Control.NOT_RUNNING, 9, 5}, statuses);
            // a request repeated before its answer came is the same request again; rank 4's status is known
            assertEquals(List.of("TERMINATE rank 1 from " + hostPort, "TERMINATE rank 2 from " + hostPort,
                    "TERMINATE rank 3 from " + hostPort), requests.stream().distinct().sorted().toList());
        }
    }

    @Test
    void shouldProbeProxiesWithoutStartingAnything() throws Exception {
        try (DatagramChannel proxy = DatagramChannel.open(); DatagramChannel silent = DatagramChannel.open()) {
            proxy.bind(new InetSocketAddress("127.0.0.1", 0));
            silent.bind(new InetSocketAddress("127.0.0.1", 0));
            InetSocketAddress up = (InetSocketAddress) proxy.getLocalAddress();
            InetSocketAddress down = (InetSocketAddress) silent.getLocalAddress();

            InetSocketAddress gone;
            try (DatagramChannel c = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
                gone = (InetSocketAddress) c.getLocalAddress();
            }
            List<String> requests = new CopyOnWriteArrayList<>();
            answering(proxy, requests);

            // the wait ends with the answer and the ICMP error: it is only a ceiling
            Map<InetSocketAddress, Prober.Answer> answered = V1Control.probe(List.of(up, gone), CEILING);
            // a proxy that never answers: the whole wait passes, however short
            Prober.Answer none = V1Control.probe(List.of(down), Duration.ofMillis(300)).get(down);

            assertEquals(Prober.Answer.ANSWERED, answered.get(up));
            assertEquals(Prober.Answer.SILENT, none);
            assertEquals("no proxy answers at 127.0.0.1:" + gone.getPort() + ": nothing listens on that UDP port",
                    answered.get(gone).problem());
        }
    }
}
