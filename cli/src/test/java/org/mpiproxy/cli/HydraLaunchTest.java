package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.ExecCommand;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.NodeIds;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/**
 * Jobs run with Hydra's options and without any node option: {@code -hosts} and its kin run the
 * job, a job given no nodes outside Slurm runs on this node's proxy, rank 0 starts in
 * {@code -wdir}, and the local proxy (a fake one that checks every request as a proxy does) gets
 * the working directory in the EXEC and refuses a program it does not have.
 */
class HydraLaunchTest {

    @TempDir
    Path dir;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final Map<String, String> env = new HashMap<>();
    private ClusterKeys keys;

    /** The EXECs the fake proxy took: program and environment. */
    private final List<ExecCommand> execs = new CopyOnWriteArrayList<>();
    private DatagramChannel proxy;
    private Thread thread;

    @BeforeEach
    void key() throws Exception {
        Path key = dir.resolve("mpiproxy.key");
        ClusterKeys.generateIfMissing(key);
        env.put("MPIPROXY_KEY_FILE", key.toString());
        keys = V2Control.keys(key.toString());
    }

    @AfterEach
    void stop() throws Exception {
        if (proxy != null) {
            proxy.close();
            thread.join(5000);
        }
    }

    private int run(String... args) {
        return MpiproxyCommand.execute(args, env, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    private Path script(String name, String body) throws Exception {
        Path program = dir.resolve(name);
        Files.writeString(program, "#!/bin/sh\n" + body + "\n");
        assertTrue(program.toFile().setExecutable(true));
        return program;
    }

    @Test
    void shouldRunTheJobOfEveryHydraNodeOptionInsteadOfPrintingTheUsage() throws Exception {
        Path program = script("ran", "echo ran");
        Path hostfile = dir.resolve("hosts");
        Files.writeString(hostfile, "127.0.0.1:1\n");
        List<List<String>> options = List.of(List.of("-hosts", "127.0.0.1:1"), List.of("-host", "127.0.0.1"),
                List.of("-hostfile", hostfile.toString()), List.of("-f", hostfile.toString()));
        for (List<String> option : options) {
            out.reset();
            err.reset();
            List<String> args = new java.util.ArrayList<>(List.of("run", "-q"));
            args.addAll(option);
            args.add(program.toString());

            assertEquals(0, run(args.toArray(String[]::new)), option + ": " + err());
            assertEquals("[0] ran\n", out(), option.toString());
        }
    }

    @Test
    void shouldRunOnThisNodeWhenNoOptionAndNoSlurmAllocationNamesNodes() throws Exception {
        Path program = script("ran", "echo \"ran as $MPIPROXY_RANK of $MPIPROXY_SIZE\"");

        assertEquals(0, run("run", "-q", "-n", "1", program.toString()), err());

        assertEquals("[0] ran as 0 of 1\n", out());
        assertEquals("", err());
    }

    @Test
    void shouldStartRankZeroInMinusWdirOrInTheHomeDirectoryWhenItIsNotOneHere() throws Exception {
        Path program = script("where", "pwd -P");
        Path work = Files.createDirectory(dir.resolve("work dir"));

        assertEquals(0, run("run", "-q", "-hosts", "127.0.0.1:1", "-wdir", work.toString(), program.toString()),
                err());
        assertEquals("[0] " + work.toRealPath() + "\n", out());

        out.reset();
        Path missing = dir.resolve("missing");
        assertEquals(0, run("run", "-q", "-hosts", "127.0.0.1:1", "-wdir", missing.toString(), program.toString()),
                err());
        assertEquals("[0] " + Path.of(System.getProperty("user.home")).toRealPath() + "\n", out());
        assertEquals("mpiproxy: " + missing + " is not a directory here: rank 0 starts in "
                + System.getProperty("user.home") + "\n", err());
    }

    @Test
    void shouldAskThisNodesProxyWithTheWorkingDirectoryAndPointAPathAtStage() throws Exception {
        int port = startProxy();
        Path work = Files.createDirectory(dir.resolve("work"));

        int status = run("run", "-n", "2", "--oversubscribe", "--port", Integer.toString(port), "-wdir",
                work.toString(), "./hello");

        assertEquals(127, status, err());
        assertEquals(1, execs.size(), execs.toString());
        assertEquals("hello", execs.get(0).program());
        assertEquals(work.toString(), execs.get(0).environment().get(RankWorld.WORKING_DIRECTORY));
        assertTrue(err().contains("mpiproxy: rank 1 (127.0.0.1:" + port + ":0) could not be started: MPI_ERR_IO: no"
                + " program 'hello' in /programs\n"), err());
        assertTrue(err().contains("mpiproxy: the nodes run the program named hello from their programs/ directory (or"
                + " program.path), not the file ./hello: --stage copies it to them\n"), err());
        assertFalse(err().contains("Usage"), err());
    }

    @Test
    void shouldSendTheLaunchersDirectoryWhenNoneIsChosen() throws Exception {
        int port = startProxy();
        Path here = Path.of("").toAbsolutePath();

        run("run", "-n", "2", "--oversubscribe", "--port", Integer.toString(port), "hello");

        assertEquals(1, execs.size(), execs.toString());
        assertEquals(here.toString(), execs.get(0).environment().get(RankWorld.WORKING_DIRECTORY),
                "ranks start where the launcher runs, as under Hydra");
    }

    @Test
    void shouldAskThisNodesProxyForItsStatusWithoutNodeOptions() throws Exception {
        int port = startProxy();

        // the wait is a ceiling: the probe ends with the proxy's answer
        assertEquals(0, run("status", "--port", Integer.toString(port), "--wait", "60000"), err());

        assertEquals("node 127.0.0.1:" + port + ": proxy answers (v2, key accepted)\n", out());
    }

    /**
     * A proxy on 127.0.0.1 that answers a probe (STATUS of job 0) as a v2 proxy does, refuses
     * every EXEC as one without the program, and answers TERMINATE as for a rank it does not run.
     *
     * @return its port
     */
    private int startProxy() throws Exception {
        proxy = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        V2Authenticator auth = new V2Authenticator(keys, NodeIds.of("127.0.0.1"), 30_000, 1024);
        thread = new Thread(() -> {
            ByteBuffer in = ByteBuffer.allocate(2048).order(V2HeaderDescriptor.BYTE_ORDER);
            ByteBuffer reply = ByteBuffer.allocate(2048).order(V2HeaderDescriptor.BYTE_ORDER);
            try {
                while (true) {
                    InetSocketAddress from = (InetSocketAddress) proxy.receive(in.clear());
                    if (auth.verify(in, 0, in.position(), System.currentTimeMillis()) != V2Authenticator.OK) {
                        continue;
                    }
                    V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(in, 0);
                    V2HeaderFlyweight r = new V2HeaderFlyweight().wrap(reply.clear(), 0)
                            .reset(h.operation(), V2HeaderDescriptor.FLAG_REPLY).keyId(keys.sendKeyId())
                            .nodeId(auth.nodeId()).jobId(h.jobId()).rank(h.rank()).sequence(h.sequence())
                            .timestamp(System.currentTimeMillis()).nonce(System.nanoTime());
                    if (h.operation() == V2HeaderDescriptor.OP_EXEC) {
                        ExecCommand exec = ExecCommand.parsePlain(in, h.payloadOffset(), h.payloadLength());
                        execs.add(exec);
                        byte[] why = ("no program '" + exec.program() + "' in /programs")
                                .getBytes(StandardCharsets.UTF_8);
                        r.result(MpiErrors.ERR_IO).payloadLength(why.length);
                        reply.put(V2HeaderDescriptor.HEADER_LENGTH, why);
                    } else if (h.operation() == V2HeaderDescriptor.OP_TERMINATE) {
                        r.result(MpiErrors.ERR_RANK);
                    } else if (h.operation() != V2HeaderDescriptor.OP_STATUS) {
                        continue;
                    }
                    int n = auth.sign(reply, 0);
                    proxy.send(reply.limit(n).position(0), from);
                }
            } catch (java.io.IOException e) {
                // closed by the test
            }
        }, "fake-proxy");
        thread.setDaemon(true);
        thread.start();
        return ((InetSocketAddress) proxy.getLocalAddress()).getPort();
    }
}
