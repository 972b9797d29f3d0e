package org.mpiproxy.proxy.internal;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.api.RankIdentity;
import org.mpiproxy.api.RankProcess;
import org.mpiproxy.process.StagedFiles;
import org.mpiproxy.protocol.JobCredential;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.pmi.PmiLimits;
import org.mpiproxy.protocol.pmi.PmiServer;
import org.slf4j.Logger;

/**
 * What a v2 node offers besides jobs' data: the PMI-1 server of MPICH programs with the fences
 * their launcher sends (docs/protocol-v2.md 5.7), the programs hosts stage here (5.8), and the
 * jobs' common environments their EXECs name ({@link V2JobEnvironments}, 5.10). The first two
 * are made when first needed. Receive thread only (the dispatcher's lock), except the PMI server's
 * own threads.
 */
final class V2NodeServices {

    /** An EXEC variable that is also the job's PMI key of that name: which ranks share a node. */
    static final String PROCESS_MAPPING = "PMI_process_mapping";

    private final V2Replies replies;
    private final PmiServer.Relay pmiLines;
    private final LongSupplier clock;
    private final LongSupplier stageMaxBytes;
    private final Logger log;
    private PmiServer pmi;
    /** The PMI server's bounds in force; {@link PmiLimits#DEFAULT} until {@link #pmiLimits} is called. */
    private volatile Supplier<PmiLimits> pmiLimits = () -> PmiLimits.DEFAULT;
    private StagedPrograms staged;
    /** {@code exec.environment.max.bytes} in force; the default until {@link #limits} is called. */
    private volatile Supplier<NodeLimits> limits = () -> NodeLimits.DEFAULT;
    private final V2JobEnvironments environments = new V2JobEnvironments(() -> limits.get().environmentMaxBytes());
    /** The node's topology plain ranks get; {@code null} (none) while no topology component is active. */
    private Supplier<NodeTopology> topology = NodeTopologyComponent::inForce;

    /**
     * @param replies  signs and sends the answers
     * @param pmiLines takes what ranks tell the PMI server for their launcher
     * @param clock         milliseconds since the epoch
     * @param stageMaxBytes the largest program a host may stage ({@code stage.max.bytes}) now
     * @param log           the dispatcher's log
     */
    V2NodeServices(V2Replies replies, PmiServer.Relay pmiLines, LongSupplier clock, LongSupplier stageMaxBytes,
                   Logger log) {
        this.replies = replies;
        this.pmiLines = pmiLines;
        this.clock = clock;
        this.stageMaxBytes = stageMaxBytes;
        this.log = log;
    }

    /** @return the PMI server, opened now if it is not yet; {@code null} when it cannot be opened (logged) */
    private PmiServer pmi() {
        if (pmi == null) {
            try {
                pmi = new PmiServer(pmiLines, log::warn);
                pmi.limits(pmiLimits);
                log.info("PMI server for MPICH programs on 127.0.0.1:{}", pmi.port());
            } catch (IOException e) {
                log.warn("cannot open the PMI server ({}): MPICH programs start as singletons", e.toString());
            }
        }
        return pmi;
    }

    /**
     * Bounds the PMI server's connections by what is in force when each one is checked
     * ({@code pmi.max.connections.per.job}, {@code .per.uid}, {@code pmi.idle.seconds}).
     */
    void pmiLimits(Supplier<PmiLimits> limits) {
        this.pmiLimits = limits;
        if (pmi != null) {
            pmi.limits(limits);
        }
    }

    /** Bounds the PMI server ({@link #pmiLimits}) and the jobs' environments by the node's limits in force. */
    void limits(Supplier<NodeLimits> nodeLimits) {
        this.limits = nodeLimits;
        pmiLimits(() -> nodeLimits.get().pmi());
    }

    /** @return the jobs' common environments, which EXECs name */
    V2JobEnvironments environments() {
        return environments;
    }

    /** Uses this topology instead of the active component's (tests). */
    void topology(Supplier<NodeTopology> nodeTopology) {
        this.topology = nodeTopology;
    }

    /** The environment and the launcher of a plain program's rank. */
    record PmiLaunch(Map<String, String> environment, ProcessLauncher launcher) {
    }

    /**
     * A plain program's launch as MPICH expects it: {@code PMI_PORT} and {@code PMI_ID} in its
     * environment, and its process id told to the PMI server once it runs; and the node's topology
     * ({@link NodeTopology#variables}). Without a PMI server the launcher is used as it is (the
     * program starts as a singleton).
     */
    PmiLaunch plainLaunch(long jobId, int rankId, int worldSize, Map<String, String> environment,
                          ProcessLauncher launcher) {
        NodeTopology node = topology.get();
        Map<String, String> hwloc = node == null ? Map.of() : node.variables(environment);
        PmiServer server = pmi();
        if (server == null) {
            Map<String, String> withTopology = new LinkedHashMap<>(environment);
            withTopology.putAll(hwloc);
            return new PmiLaunch(hwloc.isEmpty() ? environment : withTopology, launcher);
        }
        Map<String, String> withPmi = new LinkedHashMap<>(environment);
        withPmi.putAll(hwloc);
        String mapping = environment.get(PROCESS_MAPPING);
        withPmi.putAll(server.register(jobId, rankId, worldSize,
                mapping == null ? Map.of() : Map.of(PROCESS_MAPPING, mapping)));
        ProcessLauncher telling = (LaunchRequest request) -> {
            RankProcess process = launcher.launch(request);
            server.started(request.jobId(), request.rankId(), process.pid());
            return process;
        };
        return new PmiLaunch(withPmi, telling);
    }

    /**
     * A fence of the job's PMI space from its launcher (docs/protocol-v2.md 5.7): one fragment of
     * the pairs every rank put, acknowledged to the job's output port.
     */
    void onPmi(V2HeaderFlyweight header, V2Job job, InetSocketAddress source,
               DatagramTransport transport) {
        int result = pmi == null ? MpiErrors.ERR_COMM : pmi.onFence(job.jobId, header.argument(), header.sequence(),
                header.ack(), header.buffer(), header.payloadOffset(), header.payloadLength());
        replies.to(header).result(result).argument(header.argument()).sequence(header.sequence()).ack(header.ack());
        replies.send(transport, 0, source);
    }

    /**
     * A fragment of a program a host stages here, or the probe whether it is here (docs/protocol-v2.md
     * 5.8); answered to the source, as STATUS (it changes no job). A program too large is refused with
     * MPIPROXY_ERR_MESSAGE_TOO_LARGE and the largest size taken now in the argument. Signed with a job
     * key (4.1), the program is the user's of the job's credential, in her own directory.
     */
    void onStage(V2HeaderFlyweight header, InetSocketAddress source,
                 DatagramTransport transport) {
        long now = clock.getAsLong() * 1_000_000L;
        if (header.operation() == V2HeaderDescriptor.OP_ENVIRONMENT) {
            onEnvironment(header, source, transport, System.nanoTime()); // the time base of EXEC's look-ups
            return;
        }
        JobCredential c = header.keyId() == JobCredential.JOB_KEY_ID
                ? replies.authenticator().credentialOf(header.jobId()) : null;
        StagedPrograms.Outcome o;
        if (header.keyId() == JobCredential.JOB_KEY_ID && c == null) {
            // verified with the job's key, so its credential is known: never the shared directory by mistake
            o = new StagedPrograms.Outcome(MpiErrors.ERR_IO, false, "job " + Job.hex(header.jobId())
                    + ": key id 0 verified without a job key");
        } else {
            o = staged().onFragment(c == null ? null : new RankIdentity(c.uid(), c.gid()), header.argument(),
                    header.sequence(), header.ack(), header.tag(), header.buffer(), header.payloadOffset(),
                    header.payloadLength(), now);
        }
        if (o.problem() != null) {
            log.warn("v2 STAGE from {} refused with {}: {}", Job.ownerText(source), MpiErrors.name(o.result()),
                    o.problem());
        }
        long argument = o.complete() ? 1 : o.result() == MpiErrors.ERR_MESSAGE_TOO_LARGE ? o.limit() : 0;
        replies.to(header).result(o.result()).argument(argument).sequence(header.sequence())
                .ack(header.ack()).tag(header.tag());
        replies.send(transport, 0, source);
    }

    /**
     * A fragment of a job's common environment, or the probe whether the node holds it
     * (docs/protocol-v2.md 5.10): answered to the source as STAGE, with the same fields.
     */
    private void onEnvironment(V2HeaderFlyweight header, InetSocketAddress source, DatagramTransport transport,
                               long now) {
        StagedPrograms.Outcome o = header.jobId() == 0
                ? new StagedPrograms.Outcome(MpiErrors.ERR_ARG, false, "job id 0 is not allowed")
                : environments.onFragment(header.jobId(), header.argument(), header.sequence(), header.ack(),
                header.tag(), header.buffer(), header.payloadOffset(), header.payloadLength(), now);
        if (o.problem() != null) {
            log.warn("v2 ENVIRONMENT from {} refused with {}: {}", Job.ownerText(source), MpiErrors.name(o.result()),
                    o.problem());
        }
        long argument = o.complete() ? 1 : o.result() == MpiErrors.ERR_MESSAGE_TOO_LARGE ? o.limit() : 0;
        replies.to(header).result(o.result()).argument(argument).sequence(header.sequence())
                .ack(header.ack()).tag(header.tag());
        replies.send(transport, o.result() != MpiErrors.SUCCESS ? replies.putReason(o.problem()) : 0, source);
    }

    private StagedPrograms staged() {
        if (staged == null) {
            staged = new StagedPrograms(StagedFiles.directory(System::getProperty), stageMaxBytes,
                    StagedPrograms::usableSpace);
        }
        return staged;
    }

    /** Forgets a finished job's PMI space and expected ranks, and its environments. */
    void forget(long jobId) {
        environments.forget(jobId);
        if (pmi != null) {
            pmi.forget(jobId);
        }
    }

    /**
     * Instead of {@link #close()}, when the next revision of the proxy takes over: the PMI server
     * with its connections and job spaces goes on serving the running MPICH ranks.
     *
     * @return the PMI server, or {@code null}
     */
    Object handOver() {
        PmiServer server = pmi;
        pmi = null;
        return server;
    }

    /** @return the programs being staged, as plain values ({@link StagedPrograms#export()}), or {@code null} */
    Object handOverStaged() {
        return staged == null ? null : staged.export();
    }

    /** Goes on with the programs a previous revision was being given ({@link #handOverStaged()}). */
    void adoptStaged(Object exported) {
        if (exported != null) {
            staged().restore(exported, clock.getAsLong() * 1_000_000L);
        }
    }

    /**
     * Takes over the PMI server a previous revision handed over; before the first datagram. A
     * server of another revision of the protocol bundle (a refresh came in between) cannot be
     * driven: it is closed, and the MPICH ranks connected to it lose their process manager.
     *
     * @return whether a server was handed over and is served again
     */
    boolean adopt(Object handedOver) {
        if (handedOver instanceof PmiServer) {
            pmi = (PmiServer) handedOver;
            pmi.relay(pmiLines);
            pmi.limits(pmiLimits);
            log.info("PMI server on 127.0.0.1:{} taken over from the previous revision of the proxy", pmi.port());
            return true;
        }
        if (handedOver instanceof AutoCloseable) {
            try {
                ((AutoCloseable) handedOver).close();
            } catch (Exception e) {
                log.debug("closing the PMI server of another revision", e);
            }
            log.warn("the PMI server of the previous revision of the proxy is of a protocol bundle since refreshed and"
                    + " was closed: MPICH ranks still connected to it lose their process manager");
        }
        return false;
    }

    void close() {
        if (pmi != null) {
            pmi.close();
        }
    }
}
