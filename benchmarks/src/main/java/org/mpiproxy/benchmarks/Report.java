package org.mpiproxy.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Collects the figures of one harness run and renders docs/benchmarks.md.
 * <p>
 * Longer than 500 lines for a reason: it holds the wording of the whole generated page, one
 * method per section in the page's order (each a table and the sentences that read it); the
 * measurements are elsewhere, so splitting it would cut one page's text into pieces.
 */
final class Report {

    /** Anchors of /work-independent record: the figures of anchors measured once on this kind of machine. */
    static final double MPICH_TCP_64K_MBS = 1321;

    private record Goal(String what, String anchor, String ours, String ratio, String goal, boolean met) {
    }

    /**
     * A 64 KiB goal row, held until the page is written: its MPICH over TCP anchor is measured by a
     * later phase of the run (Java programs of the mpi package), or not at all.
     *
     * @param ours   the cell of our figure
     * @param mbs    our MB/s
     * @param rawMbs raw UDP 64 KiB MB/s of this run
     */
    private record LargeGoal(String what, String ours, double mbs, double rawMbs) {

        /** @param mpichTcp MPICH over TCP's 64 KiB MB/s of this run, NaN for the anchors.md figure */
        Goal goal(double mpichTcp) {
            boolean measured = !Double.isNaN(mpichTcp);
            double anchor = measured ? mpichTcp : MPICH_TCP_64K_MBS;
            return new Goal(what, f("MPICH TCP %.0f MB/s (%s); raw UDP 64 KiB %.0f MB/s (this run)", anchor,
                    measured ? "this run" : "anchors.md", rawMbs), ours,
                    f("%.2fx MPICH TCP, %.2fx raw UDP", mbs / anchor, mbs / rawMbs),
                    ">= 1.5x MPICH TCP, >= 0.25x raw UDP", mbs / anchor >= 1.5 && mbs / rawMbs >= 0.25);
        }
    }

    private final List<Goal> goals = new ArrayList<>();
    /** The 64 KiB rows by their index in {@link #goals}, completed by {@link #goals()}. */
    private final Map<Integer, LargeGoal> largeGoals = new LinkedHashMap<>();
    private final StringBuilder body = new StringBuilder();
    /** Where {@link #body} names MPICH over TCP's 64 KiB figure, filled in by {@link #render}. */
    private final List<Integer> mpichTcp64kAt = new ArrayList<>();
    /** MPICH over TCP's 64 KiB MB/s measured in this run (Java programs of the mpi package), NaN if not. */
    private double mpichTcp64k = Double.NaN;
    private final List<String> failures = new ArrayList<>();
    private String machine = "";
    private String loadAtStart = "";

    private static String f(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }

    void machine(boolean quick) {
        StringBuilder m = new StringBuilder();
        m.append("| item | value |\n| --- | --- |\n");
        m.append("| date (UTC) | ").append(Harness.now()).append(" |\n");
        m.append("| CPU | ").append(cpuModel()).append(", ").append(Runtime.getRuntime().availableProcessors())
                .append(" processors available to the JVM |\n");
        m.append("| memory | ").append(read("/proc/meminfo").lines().filter(l -> l.startsWith("MemTotal"))
                .findFirst().orElse("?").replaceAll("MemTotal:\\s+", "")).append(" |\n");
        m.append("| kernel | ").append(read("/proc/sys/kernel/osrelease").trim()).append(" |\n");
        m.append("| Java | ").append(System.getProperty("java.vm.name")).append(' ')
                .append(System.getProperty("java.runtime.version")).append(" |\n");
        loadAtStart = read("/proc/loadavg").trim();
        m.append("| load average at start | ").append(loadAtStart).append(" |\n");
        m.append("| mode | ").append(quick ? "--quick (fewer rounds)" : "full").append(" |\n");
        machine = m.toString();
    }

    private static String cpuModel() {
        return read("/proc/cpuinfo").lines().filter(l -> l.startsWith("model name")).findFirst()
                .map(l -> l.replaceAll("model name\\s*:\\s*", "")).orElse("unknown CPU");
    }

    private static String read(String file) {
        try {
            return Files.readString(Path.of(file));
        } catch (IOException e) {
            return "?";
        }
    }

    void failed(String phase, String message) {
        failures.add(phase + ": " + message);
        body.append("\n### ").append(phase).append(": not measured\n\n").append(message).append("\n");
    }

    /**
     * @param cRing4    the C ring's 4-byte records per second in this run, NaN when not measured
     * @param cRing1448 the same for 1448-byte records
     * @param cWhy      why the C ring was not measured
     */
    void rings(Map<String, Samples> received, int forks, double cRing4, double cRing1448, String cWhy) {
        body.append("\n## Rings: MappedMessageRing vs Agrona OneToOneRingBuffer (JMH)\n\n");
        body.append(f("RingBenchmark, one producer thread and one consumer thread over a mapped file in /dev/shm, "
                + "1 MiB data capacity for both rings. Records read per second by the consumer, per measurement "
                + "iteration over %d forks (each fork a fresh JVM).%n%n", forks));
        body.append("| record | ours median (min–max) | Agrona median (min–max) | ours / Agrona (medians) | samples |\n");
        body.append("| --- | --- | --- | --- | --- |\n");
        for (String size : new String[] {"4", "1448", "65536"}) {
            Samples ours = received.get("ours:" + size);
            Samples agrona = received.get("agrona:" + size);
            if (ours == null || agrona == null) {
                continue;
            }
            double ratio = ours.median() / agrona.median();
            body.append(f("| %s B | %s/s | %s/s | %.2f | %d / %d |%n", size, millions(ours), millions(agrona),
                    ratio, ours.size(), agrona.size()));
            boolean cGoal = size.equals("4") || size.equals("1448");
            double c = size.equals("4") ? cRing4 : size.equals("1448") ? cRing1448 : Double.NaN;
            String anchor = f("Agrona %s/s (this run)", rate(agrona.median()))
                    + (!cGoal ? "" : Double.isNaN(c) ? "; C ring not measured (" + cWhy + ")"
                    : f("; C ring %.1f M/s (this run)", c / 1e6));
            String ratioText = f("%.2fx Agrona", ratio) + (Double.isNaN(c) ? "" : f(", %.3fx C ring", ours.median() / c));
            boolean met = ratio >= 2 && (!cGoal || ours.median() / c >= 0.5);
            goals.add(new Goal("ring, " + size + " B records", anchor, rate(ours.median()) + "/s", ratioText,
                    ">= 2x Agrona" + (cGoal ? ", >= 0.5x C ring" : ""), met));
        }
    }

    void ringCost(Map<String, Samples> nanos) {
        body.append("\nRingCostBenchmark: the CPU cost of one record, written and read back on one thread "
                + "(no dependence on scheduling two threads). Nanoseconds per record, per iteration.\n\n");
        body.append("| record | ours median (min–max) | Agrona median (min–max) | ours / Agrona |\n| --- | --- | --- | --- |\n");
        for (String size : new String[] {"4", "1448", "65536"}) {
            Samples ours = nanos.get("ours:" + size);
            Samples agrona = nanos.get("agrona:" + size);
            if (ours != null && agrona != null) {
                body.append(f("| %s B | %s | %s | %.2f |%n", size, ours.summary("%.0f"), agrona.summary("%.0f"),
                        ours.median() / agrona.median()));
            }
        }
    }

    private static String millions(Samples s) {
        return f("%s (%s–%s)", rate(s.median()), rate(s.min()), rate(s.max()));
    }

    /** @return records per second with a unit that keeps three significant digits visible */
    private static String rate(double perSecond) {
        if (perSecond >= 1e6) {
            return f("%.2f M", perSecond / 1e6);
        }
        if (perSecond >= 1e3) {
            return f("%.1f k", perSecond / 1e3);
        }
        return f("%.0f ", perSecond);
    }

    /** @param nanos per benchmark method: nanoseconds per datagram by datagram size */
    void macs(Map<String, Map<Integer, Double>> nanos) {
        body.append("\n## Authenticating a datagram: the JDK's MACs (JMH)\n\n");
        body.append("MacBenchmark, one thread: the tag of one v2 datagram without its MAC field. `hmacSha256` is "
                + "what v2 computes today (over a direct buffer, as `V2Authenticator`); `gmac` and `gmacHeap` are "
                + "AES-GCM over associated data only, a fresh nonce each (direct buffer, heap array); `gcmEncrypt` "
                + "encrypts the datagram with AES-GCM (the tag covers the ciphertext) and `gcmDecrypt` decrypts and "
                + "verifies it (the receiver's side); `poly1305` is ChaCha20-Poly1305 over associated data only. Nanoseconds per datagram and "
                + "GB/s (10^9 bytes).\n\n");
        body.append("| MAC | 1448 B | 65507 B | vs HMAC-SHA256 at 65507 B |\n| --- | --- | --- | --- |\n");
        Map<Integer, Double> base = nanos.get("hmacSha256");
        for (Map.Entry<String, Map<Integer, Double>> e : nanos.entrySet()) {
            StringBuilder row = new StringBuilder("| " + e.getKey());
            for (int size : new int[] {1448, 65507}) {
                Double ns = e.getValue().get(size);
                row.append(ns == null ? " | -" : f(" | %.0f ns (%.2f GB/s)", ns, size / ns));
            }
            Double ns = e.getValue().get(65507);
            Double b = base == null ? null : base.get(65507);
            row.append(ns == null || b == null ? " | - |" : f(" | %.2fx |", b / ns));
            body.append(row).append('\n');
        }
    }

    /** @param micros per benchmark method: {microseconds per spawn and wait, JMH's error} */
    void spawns(Map<String, double[]> micros) {
        body.append("\n## Starting a process from a JVM (JMH)\n\n");
        body.append("SpawnBenchmark, one thread: start `/bin/true` and wait for its exit. `processBuilder` is Java's "
                + "default (posix_spawn of `jspawnhelper`, which execs the program: two execs); `posixSpawn` calls "
                + "glibc's `posix_spawn` through JNA (one exec), `posixSpawnSetsid` the same with "
                + "`POSIX_SPAWN_SETSID` (the session a rank gets today from an extra `setsid` exec). Microseconds "
                + "per process.\n\n");
        body.append("| way | µs per process | vs processBuilder |\n| --- | --- | --- |\n");
        double[] base = micros.get("processBuilder");
        for (Map.Entry<String, double[]> e : micros.entrySet()) {
            body.append(f("| %s | %.0f ± %.0f | %s |%n", e.getKey(), e.getValue()[0], e.getValue()[1],
                    base == null ? "-" : f("%.2fx", e.getValue()[0] / base[0])));
        }
    }

    void dispatch(Map<String, double[]> rows) {
        body.append("\n## Dispatch hot path allocation (JMH `-prof gc`)\n\n");
        body.append("DispatchBenchmark (v1): `sendToRing` = a 1448-byte SEND datagram in the receive buffer through "
                + "V1Dispatcher into the rank's mapped ring, then read by the rank side; `recvReply` = the rank "
                + "writes 1436 bytes, a RECV request is answered with a reply encoded from the ring and handed to "
                + "the transport. V2DispatchBenchmark: `v2SendToRing` = the host stamps and signs a 1448-byte SEND "
                + "(1344 payload bytes) with the product's authenticator, V2Dispatcher checks its MAC, finds job "
                + "and rank by id, stores it in the ring and signs the acknowledgement, the rank side reads it; "
                + "`v2RecvReply` = the rank writes 1344 bytes, a signed RECV is answered with a signed reply "
                + "encoded from the ring. Both include three HMAC-SHA256 tags per operation. JMH's GC profiler "
                + "reports allocation per operation; values below 1 B/op are JMH's own bookkeeping spread over "
                + "the operations (the smallest Java object takes 16 bytes).\n\n");
        body.append("| benchmark | time per op | allocation per op |\n| --- | --- | --- |\n");
        double v2 = 0;
        int v2Rows = 0;
        for (Map.Entry<String, double[]> e : rows.entrySet()) {
            body.append(f("| %s | %.0f ns | %.3f B |%n", e.getKey(), e.getValue()[0], e.getValue()[1]));
            if (e.getKey().startsWith("v2")) {
                v2 = Math.max(v2, e.getValue()[1]);
                v2Rows++;
            }
        }
        goals.add(new Goal("v2 receive path allocation", "v1 path (this run)",
                v2Rows == 0 ? "not measured" : f("%.3f B/op at most", v2), "-", "0 B/op (below 1 B: JMH's bookkeeping)",
                v2Rows == 2 && v2 < 1.0));
    }

    void cUdp(double perSecond, double sent, double received) {
        body.append(f("%nRaw C UDP in the same run (benchmarks/src/main/c/anchors.c: blocking `sendto` of 1448-byte "
                + "datagrams to a thread in `recvfrom`, loopback): %.0f k datagrams/s (%.0f sent, %.0f received).%n",
                perSecond / 1e3, sent, received));
    }

    void streams(List<UdpBenchmarks.Stream> raw, List<UdpBenchmarks.Stream> send, List<UdpBenchmarks.Stream> recv) {
        body.append("\n## 1448-byte streams: raw UDP vs the proxy\n\n");
        body.append("Rounds alternate raw, SEND, RECV. Raw: Java to Java over loopback, blocking DatagramChannels, "
                + "direct buffers. SEND: a host socket sends v1 SENDs of 1436 payload bytes to the embedded proxy, "
                + "a rank thread (mapping the rank's channel file, idling with the mpi library's back-off) reads "
                + "the ring. RECV: a rank thread fills its ring with 1436-byte records, the host sends one RECV for "
                + "all of it and counts 1448-byte replies. Rate = datagrams delivered per second between the first "
                + "and the last delivery; loss = 1 - delivered / sent.\n\n");
        body.append("| round | raw datagrams/s (loss) | SEND datagrams/s (loss) | RECV datagrams/s (loss) | where SENDs went |\n");
        body.append("| --- | --- | --- | --- | --- |\n");
        Samples r = new Samples();
        Samples s = new Samples();
        Samples v = new Samples();
        for (int i = 0; i < raw.size(); i++) {
            body.append(f("| %d | %s | %s | %s | %s |%n", i + 1, stream(raw.get(i)), stream(send.get(i)),
                    stream(recv.get(i)), send.get(i).detail()));
            r.add(raw.get(i).perSecond());
            s.add(send.get(i).perSecond());
            v.add(recv.get(i).perSecond());
        }
        body.append(f("| median | %.0f (%.1f MB/s) | %.0f (%.1f MB/s) | %.0f (%.1f MB/s) | |%n", r.median(),
                r.median() * 1448 / 1e6, s.median(), s.median() * 1448 / 1e6, v.median(), v.median() * 1448 / 1e6));
        goals.add(new Goal("host to rank stream, 1448 B", f("raw UDP %.0f k/s (this run)", r.median() / 1e3),
                f("%.0f k/s", s.median() / 1e3), f("%.2fx raw", s.median() / r.median()), ">= 0.9x raw",
                s.median() / r.median() >= 0.9));
        goals.add(new Goal("rank to host stream, 1448 B", f("raw UDP %.0f k/s (this run)", r.median() / 1e3),
                f("%.0f k/s", v.median() / 1e3), f("%.2fx raw", v.median() / r.median()), ">= 0.9x raw",
                v.median() / r.median() >= 0.9));
    }

    private static String stream(UdpBenchmarks.Stream s) {
        return f("%.0f (%.1f%%)", s.perSecond(), 100 * s.loss());
    }

    void profile(String title, String text) {
        body.append("\n<details><summary>JFR execution samples: ").append(title).append("</summary>\n\n```\n")
                .append(text).append("```\n</details>\n");
    }

    void large(List<UdpBenchmarks.Stream> raw, List<UdpBenchmarks.Stream> proxied) {
        body.append("\n## 64 KiB messages host to rank, protocol v1\n\n");
        body.append("Raw: 65507-byte datagrams (the largest IPv4 UDP payload) over loopback. Proxy: protocol v1 "
                + "caps a datagram at 1448 bytes, so each 64 KiB message travels as 1436-byte SENDs and is "
                + "counted when all its bytes are in the rank's ring. ");
        mpichTcp64kAt.add(body.length());
        body.append("\n\n");
        body.append("| round | raw 64 KiB datagrams MB/s (loss) | proxy 64 KiB messages MB/s |\n| --- | --- | --- |\n");
        Samples r = new Samples();
        Samples p = new Samples();
        for (int i = 0; i < raw.size(); i++) {
            body.append(f("| %d | %.0f (%.1f%%) | %.0f |%n", i + 1, raw.get(i).megabytesPerSecond(),
                    100 * raw.get(i).loss(), proxied.get(i).megabytesPerSecond()));
            r.add(raw.get(i).megabytesPerSecond());
            p.add(proxied.get(i).megabytesPerSecond());
        }
        largeGoal(new LargeGoal("64 KiB messages host to rank, protocol v1 (1448-byte datagrams; for comparison)",
                f("%.0f MB/s", p.median()), p.median(), r.median()));
    }

    /** Adds a 64 KiB row, as if MPICH over TCP were not measured, to be completed by {@link #goals()}. */
    private void largeGoal(LargeGoal row) {
        largeGoals.put(goals.size(), row);
        goals.add(row.goal(Double.NaN));
    }

    /** @return the sentence of the 64 KiB text on MPICH over TCP: this run's figure when measured, else anchors.md's */
    private String mpichTcp64kSentence() {
        if (!Double.isNaN(mpichTcp64k)) {
            return f("MPICH over TCP loopback moved 64 KiB messages at %.0f MB/s (this run: the C `bandwidth` "
                    + "program under mpiexec, 64 in flight, 400 windows; the MPICH column of \"bandwidth 64 KiB, two "
                    + "nodes\" in Java programs of the mpi package).", mpichTcp64k);
        }
        return f("MPICH over TCP loopback moved 64 KiB messages at %.0f MB/s on this kind of machine (anchors.md; "
                + "not measured in this run: the phase `Java programs of the mpi package` measures it, with an "
                + "MPI compiler).", MPICH_TCP_64K_MBS);
    }

    /**
     * The 64 KiB goal over protocol v2: raw 64 KiB datagrams and the host library's 64 KiB
     * messages, alternating, per ring capacity.
     */
    void largeV2(int datagramSize, List<UdpBenchmarks.Stream> raw, Map<Integer, List<UdpBenchmarks.Stream>> byRing,
                 double signMicros) {
        body.append("\n## 64 KiB messages host to rank, protocol v2\n\n");
        body.append(f("Raw: 65507-byte datagrams over loopback, as above. v2: the proxy serves protocol v2 "
                + "(`v2.datagram.size` %d, a generated cluster key, node name 127.0.0.1); the host is the product's "
                + "host library (`V2HostTransport`, what `Mpi.init` runs on rank 0), which sends each 65536-byte "
                + "message as %d-byte fragments, signed, windowed and acknowledged; a rank thread receives each "
                + "message whole with the mpi library's rank side (`ChannelRankTransport.recv`, mapping the rank's "
                + "channel file). A message counts when all its bytes were read from the ring. Rounds alternate raw "
                + "and v2 with each ring capacity (`ring.capacity` of the channel manager); resent = fragments "
                + "the host sent again (refused for a full ring, duplicates, out of order).%n%n", datagramSize,
                V2Benchmarks.maxPayload(datagramSize)));
        StringBuilder head = new StringBuilder("| round | raw 64 KiB datagrams MB/s (loss) |");
        StringBuilder rule = new StringBuilder("| --- | --- |");
        for (int ring : byRing.keySet()) {
            head.append(f(" v2, ring %d KiB: MB/s (loss) | fragments |", ring / 1024));
            rule.append(" --- | --- |");
        }
        body.append(head).append('\n').append(rule).append('\n');
        Samples r = new Samples();
        Map<Integer, Samples> medians = new java.util.LinkedHashMap<>();
        for (int i = 0; i < raw.size(); i++) {
            body.append(f("| %d | %.0f (%.1f%%) |", i + 1, raw.get(i).megabytesPerSecond(), 100 * raw.get(i).loss()));
            r.add(raw.get(i).megabytesPerSecond());
            for (Map.Entry<Integer, List<UdpBenchmarks.Stream>> e : byRing.entrySet()) {
                UdpBenchmarks.Stream s = e.getValue().get(i);
                body.append(f(" %.0f (%.1f%%) | %s |", s.megabytesPerSecond(), 100 * s.loss(), s.detail()));
                medians.computeIfAbsent(e.getKey(), k -> new Samples()).add(s.megabytesPerSecond());
            }
            body.append('\n');
        }
        body.append(f("| median | %.0f |", r.median()));
        for (Samples m : medians.values()) {
            body.append(f(" %.0f | |", m.median()));
        }
        body.append('\n');
        body.append(f("%nAuthenticating one %d-byte datagram (HMAC-SHA256, `V2Authenticator.sign`, median of this run, "
                + "after the phase): %.1f µs, i.e. %.0f MB/s for one thread. The host signs and the proxy verifies "
                + "every fragment, and the host library's `send` returns only when the proxy has acknowledged the "
                + "message's last fragment, so the two run one after the other: a bound of about %.0f MB/s before "
                + "any copy, system call or wake-up. CPU = each thread's CPU time during the stream as a share "
                + "of the wall time (JFR's samples below miss time spent in the SHA-256 intrinsics).%n",
                datagramSize, signMicros, V2Benchmarks.maxPayload(datagramSize) / signMicros,
                V2Benchmarks.maxPayload(datagramSize) / (2 * signMicros)));
        // the goal row takes the ring an operator configures for streaming: the largest measured
        int ring = 0;
        for (int k : medians.keySet()) {
            ring = Math.max(ring, k);
        }
        double p = medians.get(ring).median();
        largeGoal(new LargeGoal("64 KiB messages host to rank", f("%.0f MB/s (v2, %d-byte datagrams, ring %d KiB)", p,
                datagramSize, ring / 1024), p, r.median()));
    }

    /** The 1448-byte streams over protocol v2 (the host library, its default datagram size). */
    void streamsV2(List<UdpBenchmarks.Stream> raw, List<UdpBenchmarks.Stream> send, List<UdpBenchmarks.Stream> recv) {
        body.append("\n## 1448-byte streams, protocol v2\n\n");
        body.append(f("Rounds alternate raw, v2 SEND, v2 RECV. Raw: 1448-byte datagrams as in the v1 streams. v2 SEND: "
                + "the host library (`V2HostTransport`, datagram size 1448) sends messages of %d bytes (the largest "
                + "v2 payload of a 1448-byte datagram: one fragment each); a rank thread receives each with "
                + "`ChannelRankTransport.recv`. v2 RECV: a rank thread fills its ring with %d-byte records, the "
                + "host library receives them (64 records per `recv` call, pulled with RECV windows of 256 "
                + "fragments). Rate = datagrams (one per message or record) delivered per second; v2 has a "
                + "window, so nothing should be lost: loss = 1 - delivered / sent, resent = fragments sent again.%n%n",
                V2Benchmarks.maxPayload(1448), V2Benchmarks.maxPayload(1448)));
        body.append("| round | raw datagrams/s (loss) | v2 SEND datagrams/s (loss) | v2 RECV datagrams/s | SEND fragments | RECV fragments |\n");
        body.append("| --- | --- | --- | --- | --- | --- |\n");
        Samples r = new Samples();
        Samples s = new Samples();
        Samples v = new Samples();
        for (int i = 0; i < raw.size(); i++) {
            body.append(f("| %d | %s | %s | %.0f | %s | %s |%n", i + 1, stream(raw.get(i)), stream(send.get(i)),
                    recv.get(i).perSecond(), send.get(i).detail(), recv.get(i).detail()));
            r.add(raw.get(i).perSecond());
            s.add(send.get(i).perSecond());
            v.add(recv.get(i).perSecond());
        }
        body.append(f("| median | %.0f | %.0f | %.0f | | |%n", r.median(), s.median(), v.median()));
        goals.add(new Goal("host to rank stream, 1448 B, protocol v2", f("raw UDP %.0f k/s (this run)", r.median() / 1e3),
                f("%.0f k/s", s.median() / 1e3), f("%.2fx raw", s.median() / r.median()), ">= 0.9x raw",
                s.median() / r.median() >= 0.9));
        goals.add(new Goal("rank to host stream, 1448 B, protocol v2", f("raw UDP %.0f k/s (this run)", r.median() / 1e3),
                f("%.0f k/s", v.median() / 1e3), f("%.2fx raw", v.median() / r.median()), ">= 0.9x raw",
                v.median() / r.median() >= 0.9));
    }

    void roundTrip(Samples raw, Samples proxied, Samples raw2) {
        body.append("\n## One int round trip\n\n");
        body.append("Raw: blocking UDP ping-pong of 4 bytes between two threads. Proxy: the host sends SEND(1 int) "
                + "and RECV(1 int) and blocks for the reply; a rank thread waiting with the mpi library's back-off "
                + "echoes the int from its inbound ring into its outbound ring. Microseconds.\n\n");
        body.append("| | median | p90 | p99 | min | max | rounds |\n| --- | --- | --- | --- | --- | --- | --- |\n");
        row("raw UDP (before)", raw);
        row("proxy host-rank-host", proxied);
        row("raw UDP (after)", raw2);
        double rawMedian = (raw.median() + raw2.median()) / 2;
        double added = proxied.median() - rawMedian;
        double rawP99 = (raw.percentile(99) + raw2.percentile(99)) / 2;
        double addedP99 = proxied.percentile(99) - rawP99;
        goals.add(new Goal("one int round trip", f("raw UDP ping-pong p50 %.0f us, p99 %.0f us (this run)", rawMedian,
                rawP99), f("p50 %.0f us, p99 %.0f us", proxied.median(), proxied.percentile(99)),
                f("adds %.0f us p50, %.0f us p99", added, addedP99), "adds <= 10 us p50, <= 50 us p99",
                added <= 10 && addedP99 <= 50));
    }

    private void row(String name, Samples s) {
        body.append(f("| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %d |%n", name, s.median(), s.percentile(90),
                s.percentile(99), s.min(), s.max(), s.size()));
    }

    /**
     * @param cSpawn {@code posix_spawn(/bin/true)} + {@code waitpid} from C in microseconds
     *               (median, p90), {@code null} when not measured
     * @param cWhy   why it was not measured
     */
    void launch(Samples pb, Samples exec, Samples pb2, Samples pbDefault, String mechanism, double[] cSpawn,
                String cWhy) {
        String m = mechanism == null ? "Java's default" : mechanism;
        body.append("\n## Launch of one rank\n\n");
        body.append("ProcessBuilder: `start()` of a copy of /bin/true in the program directory, timed until it "
                + "returns (the exit is awaited outside the timing). EXEC: from sending EXEC (rank 1 of 2) to the "
                + "proxy's acknowledgement, which comes when the launcher has started the same program with its "
                + "channel, log files and environment; a TERMINATE follows outside the timing. The harness JVM, "
                + "which embeds the proxy, spawns with " + m + " (`jdk.lang.Process.launchMechanism`; "
                + "MPIPROXY_BENCH_JAVA_OPTS passes it to run.sh); the anchor row spawns from a JVM of its own "
                + "with Java's default (posix_spawn through jspawnhelper). Microseconds.\n\n");
        body.append("| | median | p90 | min | max | rounds |\n| --- | --- | --- | --- | --- | --- |\n");
        row5("ProcessBuilder.start, " + m + " (before)", pb);
        row5("EXEC to ack", exec);
        row5("ProcessBuilder.start, " + m + " (after)", pb2);
        row5("ProcessBuilder.start, Java's default, own JVM (anchor)", pbDefault);
        if (cSpawn != null) {
            body.append(f("| C posix_spawn(/bin/true) + waitpid (anchor, benchmarks/src/main/c/anchors.c) | %.0f | %.0f "
                    + "| - | - | %.0f |%n", cSpawn[0], cSpawn[1], cSpawn[2]));
        } else {
            body.append("\nC posix_spawn not measured: ").append(cWhy).append(".\n");
        }
        double same = (pb.median() + pb2.median()) / 2;
        body.append(f("%nEXEC / ProcessBuilder with the same mechanism: %.2fx.%n", exec.median() / same));
        double base = pbDefault.median();
        double c = cSpawn == null ? Double.NaN : cSpawn[0];
        goals.add(new Goal("EXEC to ack of one rank", f("ProcessBuilder %.0f us (this run, Java's default); ", base)
                + (cSpawn == null ? "C posix_spawn not measured" : f("C posix_spawn + waitpid %.0f us (this run)", c)),
                f("%.0f us", exec.median()), f("%.2fx ProcessBuilder, %.2fx C posix_spawn", exec.median() / base,
                exec.median() / c), "<= 1.2x ProcessBuilder, <= 1.5x C posix_spawn",
                exec.median() / base <= 1.2 && exec.median() / c <= 1.5));
    }

    private void row5(String name, Samples s) {
        body.append(f("| %s | %.0f | %.0f | %.0f | %.0f | %d |%n", name, s.median(), s.percentile(90), s.min(), s.max(),
                s.size()));
    }

    /** @param run {@code mpiproxy run -n 8} cold and warm beside mpiexec; {@code null} without the launcher's jar */
    void job8(String mpiexec, Samples mpich, Samples ours, Samples twoThreads, RunLaunches.Figures run) {
        body.append("\n## A job of 8 ranks of a trivial program\n\n");
        body.append("MPICH: `" + (mpiexec == null ? "mpiexec" : mpiexec) + " -n 8 /bin/true`, start to exit. "
                + "Proxy: 8 EXECs (ranks 1..8 of 9) of the copy of /bin/true sent at once, to the last "
                + "acknowledgement. Milliseconds.\n\n");
        body.append("| | median | p90 | min | max | rounds |\n| --- | --- | --- | --- | --- | --- |\n");
        if (mpich != null) {
            body.append(f("| mpiexec -n 8 /bin/true | %.1f | %.1f | %.1f | %.1f | %d |%n", mpich.median(),
                    mpich.percentile(90), mpich.min(), mpich.max(), mpich.size()));
        }
        body.append(f("| 8-rank EXEC to all acks | %.1f | %.1f | %.1f | %.1f | %d |%n", ours.median(),
                ours.percentile(90), ours.min(), ours.max(), ours.size()));
        body.append(f("| same, launch pool of 2 threads (before launch.threads) | %.1f | %.1f | %.1f | %.1f | %d |%n",
                twoThreads.median(), twoThreads.percentile(90), twoThreads.min(), twoThreads.max(), twoThreads.size()));
        if (mpich == null) {
            body.append("\nMPICH is not installed (run.sh installs the `mpich` package with apt-get when it can).\n");
            goals.add(new Goal("job of 8 ranks, all acks", "mpiexec not installed", f("%.1f ms", ours.median()), "-",
                    "<= 0.5x mpiexec", false));
        } else {
            goals.add(new Goal("job of 8 ranks, all acks", f("mpiexec -n 8 %.1f ms (this run)", mpich.median()),
                    f("%.1f ms", ours.median()), f("%.2fx mpiexec", ours.median() / mpich.median()), "<= 0.5x mpiexec",
                    ours.median() / mpich.median() <= 0.5));
        }
        runJob8(run);
    }

    /** The 8-rank job as a user launches it: {@code mpiproxy run}, cold and warm, against {@code mpiexec}. */
    private void runJob8(RunLaunches.Figures run) {
        String what = "job of 8 ranks, `mpiproxy run` start to exit";
        if (run == null) {
            body.append("\n`mpiproxy run -n 8` not measured: the launcher's jar cli/target/cli-*.jar is missing.\n");
            goals.add(new Goal(what, "-", "not measured: no launcher jar", "-", "<= 0.5x mpiexec", false));
            return;
        }
        body.append(f("%nThe same job as a user launches it, start to exit, in interleaved rounds (the order turned "
                + "each round), all three running the copy of /bin/true: `mpiexec -n 8`; `mpiproxy run --hosts "
                + "127.0.0.1:8 -n 8` cold (the distribution's `bin/mpiproxy` and launcher jar: a JVM of its own, "
                + "against an embedded proxy over protocol v2); and warm (the thin front `%s` handing the job to "
                + "that proxy's local socket, `RUN 1`, where the cli's `LocalRunComponent` runs the launcher in the "
                + "proxy's JVM; standard input /dev/null for every launch). Each warm launch was checked to have "
                + "run in the proxy and each cold one not. Milliseconds.%n%n", WarmRuns.FRONT_PATH));
        body.append("| | median | p90 | min | max | rounds |\n| --- | --- | --- | --- | --- | --- |\n");
        if (run.mpiexec() != null) {
            row1("mpiexec -n 8", run.mpiexec());
        }
        row1("mpiproxy run -n 8, cold (JVM launcher)", run.cold());
        if (run.warm() != null) {
            row1("mpiproxy run -n 8, warm (front, launcher in the proxy)", run.warm());
        } else {
            body.append(f("| mpiproxy run -n 8, warm | not measured: %s | | | | |%n", run.warmWhy()));
        }
        if (run.mpiexec() == null) {
            goals.add(new Goal(what, "mpiexec not installed", runCell(run.cold(), run.warm(), run.warmWhy(), "%.0f ms"),
                    "-", "<= 0.5x mpiexec", false));
        } else {
            runGoal(what, f("mpiexec -n 8 %.0f ms (this run)", run.mpiexec().median()), run.mpiexec().median(),
                    run.cold(), run.warm(), run.warmWhy(), "%.0f ms");
        }
    }

    private void row1(String name, Samples s) {
        body.append(f("| %s | %.1f | %.1f | %.1f | %.1f | %d |%n", name, s.median(), s.percentile(90), s.min(), s.max(),
                s.size()));
    }

    /** @return the cell of {@code mpiproxy run}'s figure: the warm one when measured, the cold one beside it */
    private static String runCell(Samples cold, Samples warm, String warmWhy, String format) {
        return warm != null ? f(format + " warm (front); cold " + format, warm.median(), cold.median())
                : f(format + " cold (warm not measured: %s)", cold.median(), warmWhy);
    }

    /**
     * A start-up goal of {@code mpiproxy run} against a launcher's time, {@code <= 0.5x}: judged by the
     * warm path when the front was built, else by the cold one; the row says which.
     */
    private void runGoal(String what, String anchorText, double anchor, Samples cold, Samples warm, String warmWhy,
                         String format) {
        double judged = (warm != null ? warm : cold).median() / anchor;
        String ratio = warm != null ? f("%.2fx mpiexec warm; cold %.2fx", judged, cold.median() / anchor)
                : f("%.2fx mpiexec cold", judged);
        goals.add(new Goal(what, anchorText, runCell(cold, warm, warmWhy, format), ratio, "<= 0.5x mpiexec",
                judged <= 0.5));
    }

    /** The world sizes of the start-up goal: MPI_Init + MPI_Finalize against Hydra at each. */
    static final int[] START_GOAL_SIZES = {1, 8, 32};

    private static String startGoal(int n) {
        return f("MPI_Init + MPI_Finalize, %d rank%s", n, n == 1 ? "" : "s");
    }

    void mpichSkipped(String why) {
        body.append("\n## MPI programs built with MPICH\n\nNot measured: " + why + ".\n");
        for (int n : START_GOAL_SIZES) {
            goals.add(new Goal(startGoal(n), "-", "not measured: " + why, "-", "<= 0.5x mpiexec", false));
        }
    }

    /**
     * @param start     per world size: {mpiexec, mpiproxy run cold, warm} milliseconds of init_finalize
     * @param parts     the parts of a start-up at 8 ranks, each measured alone, milliseconds
     * @param pingpong  {mpiexec, mpiproxy run cold, warm} one-way microseconds
     * @param bandwidth {mpiexec, mpiproxy run cold, warm} MB/s of 64 KiB messages
     * @param warmWhy   why the warm figures (the third of each) are {@code null}, or {@code null}
     */
    void mpich(String mpiexec, Map<Integer, Samples[]> start, Map<String, Samples> parts, Samples[] pingpong,
               Samples[] bandwidth, String warmWhy) {
        body.append("\n## MPI programs built with MPICH\n\n");
        body.append("The benchmarks' own C programs (`benchmarks/src/main/c`), built with `mpicc -O2`, run by Hydra (`"
                + mpiexec + " -n N PROGRAM`) and by `mpiproxy run --hosts 127.0.0.1:N -n N PROGRAM` (rank 0 runs under "
                + "the launcher, ranks 1..N-1 are EXECed over protocol v2 by the embedded proxy, and every rank wires "
                + "up through the PMI-1 servers of the launcher and the proxy), cold (the distribution's `bin/mpiproxy` "
                + "script and launcher jar, a JVM of its own) and warm (the thin front `" + WarmRuns.FRONT_PATH
                + "` handing the job to the proxy's local socket, where the cli's `LocalRunComponent` runs the launcher "
                + "in the proxy's JVM; each warm launch checked to have run there, each cold one not), in turn, round "
                + "by round, on this one machine, standard input /dev/null for all. Start to exit of the launcher, "
                + "milliseconds.\n\n");
        if (warmWhy != null) {
            body.append("Warm not measured: ").append(warmWhy).append(".\n\n");
        }
        body.append("| ranks | mpiexec median (min) | mpiproxy run cold median (min) | warm median (min) | cold / mpiexec "
                + "| warm / mpiexec | rounds |\n| --- | --- | --- | --- | --- | --- | --- |\n");
        for (Map.Entry<Integer, Samples[]> e : start.entrySet()) {
            Samples h = e.getValue()[0];
            Samples o = e.getValue()[1];
            Samples w = e.getValue()[2];
            body.append(f("| %d | %.0f (%.0f) | %.0f (%.0f) | %s | %.2fx | %s | %d |%n", e.getKey(), h.median(), h.min(),
                    o.median(), o.min(), w == null ? "-" : f("%.0f (%.0f)", w.median(), w.min()),
                    o.median() / h.median(), w == null ? "-" : f("%.2fx", w.median() / h.median()), h.size()));
        }
        body.append("\nThe parts of a start-up of 8 ranks, each measured alone in the same run (milliseconds):\n\n");
        body.append("| | median | min | max | rounds |\n| --- | --- | --- | --- | --- |\n");
        for (Map.Entry<String, Samples> e : parts.entrySet()) {
            Samples s = e.getValue();
            body.append(f("| %s | %.0f | %.0f | %.0f | %d |%n", e.getKey(), s.median(), s.min(), s.max(), s.size()));
        }
        body.append("\nPing-pong: one `int` back and forth between ranks 0 and 1, mean one-way time of 20000 round "
                + "trips. Bandwidth: 64 KiB messages from rank 0 to rank 1, 64 in flight, 400 windows. Both ranks on "
                + "this machine, so MPICH's shared memory carries the data under either launcher.\n\n");
        body.append("| | mpiexec median (min–max) | mpiproxy run cold median (min–max) | warm median (min–max) "
                + "| ratio cold | ratio warm | rounds |\n| --- | --- | --- | --- | --- | --- | --- |\n");
        double pp = pingpong[0].median() / pingpong[1].median();
        double bw = bandwidth[1].median() / bandwidth[0].median();
        double ppWarm = pingpong[2] == null ? Double.NaN : pingpong[0].median() / pingpong[2].median();
        double bwWarm = bandwidth[2] == null ? Double.NaN : bandwidth[2].median() / bandwidth[0].median();
        body.append(f("| ping-pong, one way, us | %s | %s | %s | %.2fx (mpiexec / ours) | %s | %d |%n",
                pingpong[0].summary("%.3f"), pingpong[1].summary("%.3f"),
                pingpong[2] == null ? "-" : pingpong[2].summary("%.3f"), pp,
                pingpong[2] == null ? "-" : f("%.2fx", ppWarm), pingpong[0].size()));
        body.append(f("| bandwidth, 64 KiB, MB/s | %s | %s | %s | %.2fx (ours / mpiexec) | %s | %d |%n",
                bandwidth[0].summary("%.0f"), bandwidth[1].summary("%.0f"),
                bandwidth[2] == null ? "-" : bandwidth[2].summary("%.0f"), bw,
                bandwidth[2] == null ? "-" : f("%.2fx", bwWarm), bandwidth[0].size()));
        for (int n : START_GOAL_SIZES) {
            Samples[] at = start.get(n);
            if (at == null) {
                goals.add(new Goal(startGoal(n), "-", "not measured at this size", "-", "<= 0.5x mpiexec", false));
            } else {
                runGoal(startGoal(n), f("mpiexec -n %d %.0f ms (this run)", n, at[0].median()), at[0].median(), at[1],
                        at[2], warmWhy, "%.0f ms");
            }
        }
        // the data path: judged by the warm launch when there is one, as the start-up
        boolean warm = pingpong[2] != null;
        double ppJudged = warm ? ppWarm : pp;
        double bwJudged = warm ? bwWarm : bw;
        String path = warm ? "warm" : "cold";
        goals.add(new Goal("MPICH ping-pong, one int, same binary", f("under mpiexec %.3f us (this run)",
                pingpong[0].median()), runCell(pingpong[1], pingpong[2], warmWhy, "%.3f us"),
                f("%.2fx mpiexec's speed %s", ppJudged, path) + (warm ? f("; cold %.2fx", pp) : ""),
                ">= 0.95x mpiexec", ppJudged >= 0.95));
        goals.add(new Goal("MPICH bandwidth, 64 KiB, same binary", f("under mpiexec %.0f MB/s (this run)",
                bandwidth[0].median()), runCell(bandwidth[1], bandwidth[2], warmWhy, "%.0f MB/s"),
                f("%.2fx mpiexec %s", bwJudged, path) + (warm ? f("; cold %.2fx", bw) : ""),
                ">= 0.95x mpiexec", bwJudged >= 0.95));
    }

    /**
     * A launch as a user who holds no cluster key against the key holder's, and the goal that it
     * costs at most one MUNGE credential more: ratio of medians {@code <= 1 + credential / key holder}.
     * A row with a failed launch does not meet it.
     */
    void userLaunch(UserLaunch.Figures fig) {
        body.append("\n## Launching as a user who holds no cluster key\n\n");
        body.append(f("`mpiproxy run --node-map NODES --hosts 127.0.0.1:%d -n %d /bin/true` (the distribution's "
                + "`bin/mpiproxy` and launcher jar) against one embedded proxy (protocol v2), start to exit, in "
                + "interleaved rounds: the key holder (the harness's user, `--key-file`); the key holder with "
                + "`--user`, making the user's credential with the key, so that the job runs as a user's does "
                + "(credential presented, ranks as the user) but no credential is asked for; a user (%s) who "
                + "asks the proxy's local socket for her job credential (docs/protocol-v2.md 4.2); the same user when MUNGE "
                + "vouches for her (4.3: the socket named does not exist, so the launcher asks the node over UDP, "
                + "as on a login node); and the anchor, one MUNGE credential made and decoded as the launcher has "
                + "it done (`munge`, then `unmunge`). A user's job presents its credential to the node and its "
                + "ranks run as her (`setpriv`), so both are in her figures. Each launch was checked against the "
                + "proxy's counters (credentials presented, MUNGE requests answered) to have taken its row's path; "
                + "a launch that failed is counted, not timed. Milliseconds.%n%n", UserLaunch.RANKS, UserLaunch.RANKS,
                fig.user()));
        body.append("| | median | p90 | min | max | rounds | failed |\n| --- | --- | --- | --- | --- | --- | --- |\n");
        userRow("key holder: `mpiproxy run -n 8 /bin/true --key-file`", fig.keyHolder(), null);
        userRow("key holder with `--user` (the user's job, no credential asked for)", fig.forUser(), null);
        userRow("user, credential from the local socket", fig.socket(), fig.socketWhy());
        userRow("user, credential MUNGE vouches for", fig.munge(), fig.mungeWhy());
        Samples c = fig.credential();
        body.append(c == null ? f("| one MUNGE credential (`munge` + `unmunge`) | not measured: %s | | | | | |%n",
                fig.mungeWhy()) : f("| one MUNGE credential (`munge` + `unmunge`) | %.1f | %.1f | %.1f | %.1f | %d | 0 |%n",
                c.median(), c.percentile(90), c.min(), c.max(), c.size()));
        String[] names = {"key holder", "key holder with `--user`", "user, local socket", "user, MUNGE"};
        UserLaunch.Row[] rows = {fig.keyHolder(), fig.forUser(), fig.socket(), fig.munge()};
        for (int i = 0; i < rows.length; i++) {
            if (rows[i] != null && rows[i].firstFailure != null) {
                body.append(f("%nThe first failed launch of the row \"%s\": %s%n", names[i], rows[i].firstFailure));
            }
        }
        UserLaunch.Row k = fig.keyHolder();
        double holder = k.millis.size() == 0 ? Double.NaN : k.millis.median();
        double bound = c == null ? Double.NaN : 1 + c.median() / holder;
        String anchor = f("key holder %s; one MUNGE credential %s (this run)", Double.isNaN(holder) ? "failed"
                : f("%.0f ms", holder), c == null ? "not measured: " + fig.mungeWhy() : f("%.1f ms", c.median()));
        String goal = Double.isNaN(bound) ? "<= 1 + (one MUNGE credential / key-holder median): not computed"
                : f("<= 1 + (one MUNGE credential / key-holder median) = %.3fx", bound);
        boolean holderOk = k.failed == 0 && !Double.isNaN(holder);
        userGoal("launch as a user (local socket)", anchor, fig.socket(), fig.socketWhy(), holder, bound, goal, holderOk);
        userGoal("launch as a user (MUNGE)", anchor, fig.munge(), fig.mungeWhy(), holder, bound, goal, holderOk);
    }

    private void userRow(String name, UserLaunch.Row row, String why) {
        Samples s = row == null ? null : row.millis;
        body.append(row == null ? f("| %s | not measured: %s | | | | | |%n", name, why)
                : s.size() == 0 ? f("| %s | every launch failed | | | | 0 | %d |%n", name, row.failed)
                : f("| %s | %.1f | %.1f | %.1f | %.1f | %d | %d |%n", name, s.median(), s.percentile(90), s.min(),
                s.max(), s.size(), row.failed));
    }

    private void userGoal(String what, String anchor, UserLaunch.Row user, String why, double holder, double bound,
                          String goal, boolean holderOk) {
        if (user == null) {
            goals.add(new Goal(what, anchor, "not measured: " + why, "-", goal, false));
            return;
        }
        if (user.millis.size() == 0) {
            goals.add(new Goal(what, anchor, f("every launch failed (%d)", user.failed), "-", goal, false));
            return;
        }
        double ratio = user.millis.median() / holder;
        String failed = user.failed == 0 ? "" : f("; %d of %d launches failed", user.failed, user.attempts());
        goals.add(new Goal(what, anchor, f("%.0f ms%s", user.millis.median(), failed), f("%.3fx key holder", ratio),
                goal, holderOk && user.failed == 0 && !Double.isNaN(bound) && ratio <= bound));
    }

    private static final String[] JAVA_MPI_GOALS = {
        "Java mpi ping-pong, one int, 2 ranks on one node", "Java mpi bandwidth, 64 KiB, 2 ranks on one node",
        "Java mpi ping-pong, one int, 2 ranks on two nodes", "Java mpi bandwidth, 64 KiB, 2 ranks on two nodes",
        "Java mpi allReduce, 1 double, 8 ranks on one node"};

    void javaMpiSkipped(String why) {
        body.append("\n## Java programs of the mpi package\n\nNot measured: " + why + ".\n");
        for (String name : JAVA_MPI_GOALS) {
            goals.add(new Goal(name, "-", "not measured: " + why, "-", "-", false));
        }
    }

    /** The row of {@link #javaMpi}'s {@code rows} with MPICH over TCP's 64 KiB bandwidth: two nodes. */
    static final int TCP_BANDWIDTH_ROW = 3;

    /**
     * @param rows {MPICH under Hydra, ours} per row: ping-pong and bandwidth on one node (MPICH over
     *             shared memory), the same on two nodes (MPICH over TCP), allReduce of 8
     */
    void javaMpi(String mpiexec, Samples[][] rows) {
        body.append("\n## Java programs of the mpi package\n\n");
        body.append("The benchmarks' Java programs (`org.mpiproxy.benchmarks.mpi`: `PingPong`, `Bandwidth`, "
                + "`AllReduce`, importing only the `mpi` package) run as a user runs them, `mpiproxy run --hosts H "
                + "-n N programs/mpijava -cp CLASSES MAIN`, beside the same programs in C "
                + "(`benchmarks/src/main/c`) built with `mpicc -O2` and run by `" + mpiexec + " -n N`, "
                + "alternately, round by round (the first round of each is not counted). One node: ranks 1 and 2 of "
                + "a world of 3 on the first embedded proxy (127.0.0.1), talking through their ring pair in the job "
                + "directory (rank 0, the launcher's, still reaches the ranks of its node through the proxy), "
                + "beside MPICH's ranks 0 and 1 through its shared memory. Two nodes: rank 0 here and rank 1 on a "
                + "second embedded proxy (127.0.0.2, its own port), so that every message goes through that proxy "
                + "over protocol v2; MPICH over TCP on loopback (`MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp "
                + "UCX_NET_DEVICES=lo`). "
                + "Ping-pong: mean one-way time of round trips of one `int` after a tenth as many of warm-up, "
                + "1,000,000 on one node (the JVM compiles the path within the first 100,000: 20,000 round trips "
                + "measure mostly the interpreter), 20,000 on two nodes; bandwidth: 64 KiB messages, 64 "
                + "in flight (non-blocking), 400 windows; allReduce: mean time of 200 `allReduce` calls of one "
                + "double (`SUM`) over 8 ranks on one node (8 ranks share the machine's CPUs).\n\n");
        body.append("| what | MPICH median (min–max) | ours median (min–max) | ratio | goal | rounds |\n"
                + "| --- | --- | --- | --- | --- | --- |\n");
        String[] what = {"ping-pong, one node, us", "bandwidth 64 KiB, one node, MB/s", "ping-pong, two nodes, us",
            "bandwidth 64 KiB, two nodes, MB/s", "allReduce of 8, us"};
        String[] anchors = {"MPICH shm %.3f us (this run)", "MPICH shm %.0f MB/s (this run)",
            "MPICH TCP %.3f us (this run)", "MPICH TCP %.0f MB/s (this run)", "MPICH %.1f us (this run)"};
        String[] oursFormat = {"%.3f us", "%.0f MB/s", "%.3f us", "%.0f MB/s", "%.1f us"};
        boolean[] time = {true, false, true, false, true};
        double[] limit = {3.0, 0.5, 2.0, 1.0, 2.0};
        String[] goalText = {"<= 3x MPICH shm's time", ">= 0.5x MPICH shm", "<= 2x MPICH TCP's time",
            ">= 1.0x MPICH TCP", "<= 2x MPICH's time"};
        for (int i = 0; i < rows.length; i++) {
            Samples mpich = rows[i][0];
            Samples ours = rows[i][1];
            double ratio = ours.median() / mpich.median();
            boolean met = time[i] ? ratio <= limit[i] : ratio >= limit[i];
            String format = time[i] ? "%.3f" : "%.0f";
            body.append(f("| %s | %s | %s | %.2fx | %s | %d |%n", what[i], mpich.summary(format), ours.summary(format),
                    ratio, goalText[i], mpich.size()));
            goals.add(new Goal(JAVA_MPI_GOALS[i], f(anchors[i], mpich.median()), f(oursFormat[i], ours.median()),
                    f(time[i] ? "%.2fx MPICH's time" : "%.2fx MPICH", ratio), goalText[i], met));
        }
        // MPICH over TCP at 64 KiB, measured here, is also the anchor of the 64 KiB rows
        mpichTcp64k = rows[TCP_BANDWIDTH_ROW][0].median();
    }

    /** The goal of the fault row: goodput under faults against the same stream without them. */
    static final double LOSS_GOAL = 0.8;

    void lossSkipped(String why) {
        body.append("\n## 10% packet loss and 10% duplication, protocol v2\n\nNot measured: ").append(why).append(".\n");
        goals.add(new Goal("10% loss + 10% duplication, v2", "-", "not measured", "-",
                f("goodput >= %.1fx lossless, every byte exact", LOSS_GOAL), false));
    }

    void loss(Map<String, String> values) {
        body.append("\n## 10% packet loss and 10% duplication, protocol v2\n\n");
        body.append(f("Inside a fresh network namespace: 64 KiB messages host to rank over protocol v2 (65507-byte "
                + "datagrams, ring 4096 KiB, the product's host library), each message stamped with its index and "
                + "compared byte for byte by the rank with what was sent (a message lost, repeated, reordered or "
                + "changed fails the run). Rounds alternate: without faults, then with nft rules that drop 10%% of "
                + "the UDP datagrams between host and proxy and duplicate 10%% of them (those to or from the "
                + "proxy's port; `numgen random mod 10 < 1`, `drop` on input, `dup to 127.0.0.1` on output), in "
                + "force from the EXEC to the last TERMINATE reply. The 8-byte doorbells the proxy rings from its "
                + "port to wake the rank on the same node are exempt: they are local signals, not network "
                + "traffic. Goodput = bytes of exact messages per second at the rank. The dropped and "
                + "duplicated columns are nft's counters; fragments: the proxy's counters (resent = fragments that "
                + "came again), then the host library's (sent again at once for a hole a reply showed, or after a "
                + "retransmit timeout).%n%n"));
        body.append("| run | goodput MB/s | messages sent | received exact | datagrams dropped | datagrams duplicated "
                + "| fragments |\n| --- | --- | --- | --- | --- | --- | --- |\n");
        Samples lossless = new Samples();
        Samples faults = new Samples();
        boolean exact = true;
        for (Map.Entry<String, String> e : values.entrySet()) {
            String[] parts = e.getValue().split(" ", 6);
            body.append(f("| %s | %s | %s | %s | %s | %s | %s |%n", e.getKey(), parts[0], parts[1], parts[2], parts[3],
                    parts[4], parts.length > 5 ? parts[5] : ""));
            (e.getKey().startsWith("lossless") ? lossless : faults).add(Double.parseDouble(parts[0]));
            exact &= parts[1].equals(parts[2]);
        }
        double ratio = faults.median() / lossless.median();
        goals.add(new Goal("10% loss + 10% duplication, v2", f("lossless v2 %.0f MB/s (this run)", lossless.median()),
                f("%.0f MB/s%s", faults.median(), exact ? ", every byte exact" : ", NOT all exact"),
                f("%.2fx lossless", ratio), f("goodput >= %.1fx lossless, every byte exact", LOSS_GOAL),
                exact && ratio >= LOSS_GOAL));
    }

    void idle(int seconds, double idleThread, double idleProcess, double blockedRank, double pendingThread) {
        body.append("\n## Idle proxy and blocked ranks\n\n");
        body.append(f("CPU time over %d s from /proc/<pid>/stat (utime + stime), as a share of one CPU.%n%n", seconds));
        body.append("| what | CPU |\n| --- | --- |\n");
        body.append(f("| proxy receive thread, no job | %.2f%% |%n", 100 * idleThread));
        body.append(f("| whole harness JVM (proxy plus harness), no job | %.2f%% |%n", 100 * idleProcess));
        body.append(f("| proxy receive thread, a RECV pending on a blocked rank | %.2f%% |%n", 100 * pendingThread));
        body.append(f("| rank process (Java, mpi library) blocked in recv | %.2f%% |%n", 100 * blockedRank));
        goals.add(new Goal("idle proxy", "-", f("%.2f%% CPU", 100 * idleThread), "-", "< 1% CPU", idleThread < 0.01));
        goals.add(new Goal("blocked rank / proxy waiting on it", "-", f("rank %.2f%%, proxy %.2f%% CPU",
                100 * blockedRank, 100 * pendingThread), "-", "< 1% CPU, no spinning",
                blockedRank < 0.01 && pendingThread < 0.01));
    }

    void lateAnswers(long afterMillis, double[] millis) {
        double[] sorted = millis.clone();
        java.util.Arrays.sort(sorted);
        body.append(f("%nAn answer after a long wait: the rank blocked in recv and the proxy holding the host's RECV "
                + "both waited %d ms, then the host sent the int the rank waits for and timed the rank's echo "
                + "(%d times): median %.2f ms, min %.2f ms, max %.2f ms.%n", afterMillis, millis.length,
                sorted[sorted.length / 2], sorted[0], sorted[sorted.length - 1]));
    }

    void resources(List<ResourceBenchmark.Row> rows, ResourceBenchmark.Flood flood) {
        body.append("\n## Resources per rank\n\n");
        body.append("The proxy's threads (`/proc/self/task`) and open descriptors (`/proc/self/fd`) while one job of N "
                + "ranks of `idle` runs, against the counts just before it; then one rank of `yes` writing output "
                + f("without pause for %d s: the JVM's CPU (proxy plus harness) and the output poller thread's, as a ", flood.seconds())
                + "share of one CPU, and what the rank wrote (`wchar`).\n\n");
        body.append("| ranks | threads | descriptors | threads per rank | descriptors per rank |\n| --- | --- | --- | --- | --- |\n");
        for (ResourceBenchmark.Row r : rows) {
            body.append(f("| %d | %d (%d before) | %d (%d before) | %.2f | %.2f |%n", r.ranks(), r.threads(), r.baseThreads(),
                    r.fds(), r.baseFds(), r.threadsPerRank(), r.fdsPerRank()));
        }
        body.append(f("%n| one rank flooding | JVM CPU | poller thread CPU | rank wrote |%n| --- | --- | --- | --- |%n"
                + "| `yes`, %d s | %.1f%% | %s | %.1f MiB/s |%n", flood.seconds(), 100 * flood.proxyCpu(),
                flood.pollerCpu() < 0 ? "-" : f("%.1f%%", 100 * flood.pollerCpu()), flood.rankMiBps()));
    }

    /**
     * @param hydraRanks {@code mpiexec -n N /bin/true} milliseconds at each N of {@code ranks};
     *                   {@code null} when mpiexec is not installed
     * @param hydraJobs  J concurrent {@code mpiexec -n 2 /bin/true} at each J of {@code jobs}
     */
    void growth(List<LaunchBenchmarks.Growth> ranks, List<LaunchBenchmarks.Growth> jobs, List<Double> hydraRanks,
                List<Double> hydraJobs) {
        body.append("\n## Growth\n\n");
        body.append("One job of N ranks of `idle` (a shell script that execs `sleep`), all EXECs sent at once: time "
                + "to the last acknowledgement, then memory while all ranks run: the proxy JVM's resident set "
                + "(the harness JVM, which embeds the proxy), the memory of the channel files (two rings of " + ProxyFixture.RING_CAPACITY / 1024 + " KiB per rank, "
                + "sparse files: `du`, the pages actually used) and "
                + "the ranks' resident sets. Beside each N, in the same run: Hydra's `mpiexec -n N /bin/true`, "
                + "start to exit (median of 3 after one warm-up); beside each J, J concurrent `mpiexec -n 2 "
                + "/bin/true` started at once, first start to last exit (median of 3).\n\n");
        body.append("![launch time by ranks](benchmarks/launch-ranks.png)\n![memory by ranks](benchmarks/memory-ranks.png)\n\n");
        body.append("| ranks | launch ms | ms per rank | mpiexec ms | ours / mpiexec | proxy RSS MiB | channel files MiB | ranks RSS MiB |\n");
        body.append("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
        double worstRanks = growthRows(ranks, hydraRanks, 1);
        body.append("\nJ concurrent jobs of 2 ranks each (J host sockets), all EXECs sent at once.\n\n");
        body.append("![launch time by jobs](benchmarks/launch-jobs.png)\n\n");
        body.append("| jobs | launch ms | ms per rank | mpiexec ms | ours / mpiexec | proxy RSS MiB | channel files MiB | ranks RSS MiB |\n");
        body.append("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
        double worstJobs = growthRows(jobs, hydraJobs, 2);
        if (hydraRanks == null) {
            goals.add(new Goal("launch growth, every N and J", "mpiexec not installed", "-", "-",
                    "<= 0.5x mpiexec at every N", false));
        } else {
            int largest = ranks.get(ranks.size() - 1).x();
            goals.add(new Goal("launch growth, 1.." + largest + " ranks and 1.." + jobs.get(jobs.size() - 1).x()
                    + " jobs", "mpiexec at each N and J (this run)", "see Growth", f("%.2fx mpiexec at worst (ranks), "
                    + "%.2fx (jobs)", worstRanks, worstJobs), "<= 0.5x mpiexec at every N",
                    worstRanks <= 0.5 && worstJobs <= 0.5));
        }
    }

    /** @return the largest ours / mpiexec ratio of the rows, NaN without mpiexec */
    private double growthRows(List<LaunchBenchmarks.Growth> rows, List<Double> hydra, int ranksPerUnit) {
        double worst = hydra == null ? Double.NaN : 0;
        for (int i = 0; i < rows.size(); i++) {
            LaunchBenchmarks.Growth g = rows.get(i);
            String mpiexec = "-";
            String ratio = "-";
            if (hydra != null) {
                double h = hydra.get(i);
                mpiexec = f("%.1f", h);
                ratio = f("%.2f", g.launchMillis() / h);
                worst = Math.max(worst, g.launchMillis() / h);
            }
            body.append(f("| %d | %.1f | %.2f | %s | %s | %.0f | %.1f | %.1f |%n", g.x(), g.launchMillis(),
                    g.launchMillis() / (ranksPerUnit * g.x()), mpiexec, ratio, g.proxyRssMiB(), g.channelMiB(),
                    g.ranksRssMiB()));
        }
        return worst;
    }

    /** @return the goal rows, the 64 KiB ones against MPICH over TCP of this run when it was measured */
    private List<Goal> goals() {
        List<Goal> rows = new ArrayList<>(goals);
        largeGoals.forEach((i, row) -> rows.set(i, row.goal(mpichTcp64k)));
        return rows;
    }

    String goalTable() {
        StringBuilder sb = new StringBuilder();
        sb.append("| what | anchor | ours | ratio | goal | met |\n| --- | --- | --- | --- | --- | --- |\n");
        for (Goal g : goals()) {
            sb.append("| ").append(g.what()).append(" | ").append(g.anchor()).append(" | ").append(g.ours())
                    .append(" | ").append(g.ratio()).append(" | ").append(g.goal()).append(" | ")
                    .append(g.met() ? "yes" : "**no**").append(" |\n");
        }
        return sb.toString();
    }

    String render(String analysis) {
        StringBuilder doc = new StringBuilder();
        doc.append("# Benchmarks\n\n");
        doc.append("Generated by `benchmarks/run.sh` (the harness `org.mpiproxy.benchmarks.Harness`); do not edit "
                + "the figures by hand: run the script again. Every goal is a ratio measured side by side in the "
                + "same run, because absolute times on this kind of machine drift from run to run. The C anchors "
                + "(posix_spawn, the C ring, raw C UDP: benchmarks/src/main/c/anchors.c) are built with gcc and run "
                + "in the same run; figures marked *anchors.md* (MPICH over TCP at 64 KiB, when the run did not "
                + "measure it) were measured once on this kind of machine.\n\n");
        doc.append("## How to run\n\n```\nbenchmarks/run.sh            # full run, about 15 minutes, rewrites docs/benchmarks.md\n"
                + "benchmarks/run.sh --quick    # fewer rounds, for a smoke test\n"
                + "benchmarks/run.sh --only 'over protocol v2' --out /tmp/v2.md   # some phases only\n```\n\n"
                + "`--only` takes a comma-separated list; a phase runs when its name contains one of the entries. "
                + "Phases: `UDP streams`, `1448-byte streams over protocol v2`, `64 KiB messages host to rank over "
                + "protocol v1`, `64 KiB messages host to rank over protocol v2`, `round trip`, `launch`, `8-rank job "
                + "vs mpiexec`, `MPICH programs`, `user without a cluster key`, `Java programs of the mpi package`, `packet loss`, `idle CPU`, `growth`, `rings (JMH)`, `dispatch allocation (JMH -prof "
                + "gc)`, `MACs (JMH)`, `spawn (JMH)`. A partial run should write elsewhere than docs/benchmarks.md (`--out`).\n\n"
                + "It builds with `mvn -B -q package -DskipTests -pl benchmarks,cli,examples -am`, installs `mpich`, "
                + "`libmpich-dev` and `nftables` with apt-get when they are missing and it runs as root, and starts "
                + "the harness, which "
                + "embeds the proxy (UDP transport, the v1 and v2 dispatchers behind the protocol front, mapped-file "
                + "channels, local launcher; for v2 a cluster key generated into a temporary file and node name "
                + "127.0.0.1) on an ephemeral loopback port, drives v2 with the product's host library "
                + "(`V2HostTransport`), runs MPI programs it builds with `mpicc` (when `libmpich-dev` is installed) under "
                + "`mpiexec` and under the distribution's `bin/mpiproxy` with the launcher jar from `cli/target` (cold) "
                + "and through the thin front `" + WarmRuns.FRONT_PATH + "` (warm: the embedded proxy's local socket "
                + "runs the cli's `LocalRunComponent`; built when gcc is there), runs "
                + "Java programs of the `mpi` package with `mpijava` and `examples/target/mpi.jar` (for two nodes, a "
                + "second embedded proxy on 127.0.0.2), "
                + "and runs the JMH benchmarks in forked JVMs. JMH alone: "
                + "`java -cp benchmarks/target/classes:$(cat benchmarks/target/classpath.txt) org.openjdk.jmh.Main "
                + "RingBenchmark -prof gc`.\n\n");
        doc.append("## Machine\n\n").append(machine);
        doc.append("| load average at end | ").append(read("/proc/loadavg").trim()).append(" |\n");
        doc.append("\nThe load averages show what else ran on this machine beside the harness; ring and stream "
                + "figures on 2 vCPUs depend on whether both threads get a CPU.\n");
        doc.append("\n## Goals\n\n").append(goalTable());
        if (!failures.isEmpty()) {
            doc.append("\nNot measured in this run:\n\n");
            for (String failure : failures) {
                doc.append("- ").append(failure).append('\n');
            }
        }
        StringBuilder text = new StringBuilder(body);
        for (int i = mpichTcp64kAt.size() - 1; i >= 0; i--) {
            text.insert(mpichTcp64kAt.get(i), mpichTcp64kSentence());
        }
        doc.append(text);
        if (!analysis.isBlank()) {
            doc.append('\n').append(analysis.strip()).append('\n');
        }
        return doc.toString();
    }
}
