package org.mpiproxy.cli;

import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.mpiproxy.protocol.ExecCommand;
import org.mpiproxy.protocol.ExecEnvironment;
import org.mpiproxy.protocol.V2HeaderDescriptor;

/**
 * The payloads of a job's plain EXECs (docs/protocol-v2.md 5.1), and, when a rank's command line
 * and environment do not fit one datagram, the job's common environment sent once per node
 * (ENVIRONMENT, 5.10): then every EXEC names it by its digest
 * ({@link V2HeaderDescriptor#FLAG_ENVIRONMENT}) and carries only the rank's own variables. A job
 * whose EXECs fit sends nothing more than today. A node that answers an EXEC with
 * MPIPROXY_ERR_NO_ENVIRONMENT (it lost the environment: restarted, or dropped it idle) gets it again,
 * at most {@value #MAX_RESENDS} times. Used by {@link V2Session#exec} on the caller's thread.
 */
final class V2ExecPayloads {

    /** The largest EXEC payload: one datagram of the default size. */
    static final int MAX_PAYLOAD = V2HeaderDescriptor.DEFAULT_DATAGRAM_LENGTH - HEADER_LENGTH
            - V2HeaderDescriptor.MAC_LENGTH;
    /** How often one node gets the environment again after it said it lacks it. */
    static final int MAX_RESENDS = 3;

    private final byte[][] payloads;
    /** The common environment's encoding, or {@code null} when every EXEC carries its whole environment. */
    private final byte[] environment;
    private final Map<InetSocketAddress, List<Integer>> ranksByNode = new LinkedHashMap<>();
    private final Map<InetSocketAddress, Integer> resends = new HashMap<>();
    private final Set<InetSocketAddress> again = new LinkedHashSet<>();

    private V2ExecPayloads(byte[][] payloads, byte[] environment) {
        this.payloads = payloads;
        this.environment = environment;
    }

    /**
     * @param program      the program's name on the nodes
     * @param args         its arguments
     * @param environments rank r's environment at element r-1
     * @return the payloads
     * @throws IllegalArgumentException with a one-line reason when a rank's EXEC does not fit one
     *                                  datagram even with the common environment apart
     */
    static V2ExecPayloads of(String program, List<String> args, List<Map<String, String>> environments) {
        int size = environments.size() + 1;
        byte[][] payloads = new byte[size][];
        boolean fit = true;
        for (int r = 1; r < size; r++) {
            payloads[r] = new ExecCommand(program, args, environments.get(r - 1)).encodePlain();
            fit &= payloads[r].length <= MAX_PAYLOAD;
        }
        if (fit) {
            return new V2ExecPayloads(payloads, null);
        }
        Map<String, String> common = new LinkedHashMap<>(environments.get(0));
        for (Map<String, String> e : environments) {
            common.entrySet().removeIf(v -> !v.getValue().equals(e.get(v.getKey())));
        }
        if (common.isEmpty()) {
            for (int r = 1; r < size; r++) {
                if (payloads[r].length > MAX_PAYLOAD) {
                    throw new IllegalArgumentException("the command line and environment of rank " + r + " take "
                            + payloads[r].length + " bytes; one EXEC carries at most " + MAX_PAYLOAD + ": pass fewer"
                            + " or shorter arguments or variables of its own");
                }
            }
        }
        byte[] encoded = ExecEnvironment.encode(common);
        byte[] digest = ExecEnvironment.digest(encoded);
        for (int r = 1; r < size; r++) {
            Map<String, String> own = new LinkedHashMap<>(environments.get(r - 1));
            own.keySet().removeAll(common.keySet());
            payloads[r] = ExecEnvironment.execPayload(digest, new ExecCommand(program, args, own).encodePlain());
            if (payloads[r].length > MAX_PAYLOAD) {
                throw new IllegalArgumentException("the command line and own variables of rank " + r + " take "
                        + payloads[r].length + " bytes besides the job's common environment (" + encoded.length
                        + " bytes); one EXEC carries at most " + MAX_PAYLOAD + ": pass fewer or shorter arguments");
            }
        }
        return new V2ExecPayloads(payloads, encoded);
    }

    /** @return rank r's EXEC payload */
    byte[] payload(int rank) {
        return payloads[rank];
    }

    /** @return the flags the EXECs add to PLAIN and OUTPUT */
    int flags() {
        return environment == null ? 0 : V2HeaderDescriptor.FLAG_ENVIRONMENT;
    }

    /** @return the common environment's length in bytes, -1 when the EXECs carry their whole environment */
    int environmentLength() {
        return environment == null ? -1 : environment.length;
    }

    /**
     * Sends the common environment to every node that lacks it (nothing when the EXECs carry
     * their whole environment).
     *
     * @param nodes the nodes and their ranks
     * @param wait  how long to try
     * @return why a rank's node does not have it, by rank; empty when every node has it
     * @throws IOException when the socket fails
     */
    Map<Integer, String> send(Map<InetSocketAddress, List<Integer>> nodes, long jobId, V2Control.Signer signer,
                              Duration wait) throws IOException {
        ranksByNode.putAll(nodes);
        Map<Integer, String> problems = new java.util.TreeMap<>();
        if (environment == null) {
            return problems;
        }
        String what = "the job's environment";
        Map<InetSocketAddress, String> lacking = V2Stage.transfer(V2HeaderDescriptor.OP_ENVIRONMENT, what,
                new ArrayList<>(nodes.keySet()), jobId, signer.keys, signer.credential, environment, wait);
        // a refusal starts nothing, as a refused EXEC (MPI_ERR_...); silence is the node's, as an EXEC's
        lacking.forEach((node, problem) -> nodes.get(node).forEach(r -> problems.put(r,
                problem.startsWith(what + ": no answer") ? problem : "MPI_ERR_IO: " + problem)));
        return problems;
    }

    /**
     * A node answered an EXEC with MPIPROXY_ERR_NO_ENVIRONMENT.
     *
     * @return whether it gets the environment again ({@link #sendAgain}) and the EXEC is still pending;
     *         false once it had it {@value #MAX_RESENDS} times again (the refusal is the rank's failure)
     */
    boolean lost(InetSocketAddress node) {
        if (environment == null || resends.merge(node, 1, Integer::sum) > MAX_RESENDS) {
            return false;
        }
        again.add(node);
        return true;
    }

    /** Sends the environment again to the nodes {@link #lost} named since; their EXECs follow. */
    void sendAgain(long jobId, V2Control.Signer signer, Duration wait) throws IOException {
        if (again.isEmpty()) {
            return;
        }
        Map<InetSocketAddress, List<Integer>> nodes = new LinkedHashMap<>();
        again.forEach(n -> nodes.put(n, ranksByNode.getOrDefault(n, List.of())));
        again.clear();
        send(nodes, jobId, signer, wait); // a node that still lacks it refuses the EXEC again
    }
}
