package org.mpiproxy.cli;

import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_MUNGE;
import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_REPLY;
import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.MAC_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_CREDENTIAL;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.mpiproxy.protocol.JobCredential;
import org.mpiproxy.protocol.NodeIds;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/**
 * A job credential that MUNGE vouches for (docs/protocol-v2.md 4.3), on a machine without a proxy
 * of its own: a CREDENTIAL request with the MUNGE flag to a node of the job, whose payload is a
 * MUNGE credential of this user naming the node, the job id and the request's nonce; the node
 * answers with a MUNGE credential only this user can decode, holding the job credential and its
 * job key, and signs the answer with that job key. Sent again up to {@value #RESENDS} times,
 * {@link #RESEND_AFTER} apart, each time with a fresh MUNGE credential (munged decodes one only
 * once). Calls the {@code munge} and {@code unmunge} programs of the MUNGE installation.
 */
final class MungeCredential {

    /** How many times a request is sent again when no answer comes. */
    static final int RESENDS = 3;
    /** How long an answer is waited for before the request is sent again. */
    static final Duration RESEND_AFTER = Duration.ofSeconds(1);
    /** The first word of the line the request's MUNGE credential carries. */
    static final String LINE = "mpiproxy-credential-request-1";

    private static final Duration PROGRAM_WAIT = Duration.ofSeconds(10);
    /** The timestamp skew a node's answer may have (docs/protocol-v2.md 3.2). */
    private static final long SKEW_MILLIS = 30_000;
    private static final int MAX_DATAGRAM = 65_507;
    private static final int JOB_KEY_LENGTH = 32;
    private static final int JOB_ID_OFFSET = 16;

    private MungeCredential() {
    }

    /**
     * Asks a node for a job credential.
     *
     * @param node     the node's proxy
     * @param nodeName the node's name, whose node id the request names
     * @param jobId    the job, or 0 for a new one
     * @return the identity, signing with the job key
     * @throws IOException in one line, when MUNGE fails here or the node does not answer
     */
    static LauncherIdentity ask(InetSocketAddress node, String nodeName, long jobId) throws IOException {
        long nodeId = NodeIds.of(nodeName);
        SecureRandom random = new SecureRandom();
        ByteBuffer in = ByteBuffer.allocate(MAX_DATAGRAM).order(ByteOrder.LITTLE_ENDIAN);
        try (DatagramChannel channel = DatagramChannel.open(); Selector selector = Selector.open()) {
            channel.configureBlocking(false);
            channel.connect(node);
            channel.register(selector, SelectionKey.OP_READ);
            for (int attempt = 0; attempt <= RESENDS; attempt++) {
                channel.write(request(nodeId, jobId, random.nextLong()));
                long deadline = System.nanoTime() + RESEND_AFTER.toNanos();
                for (long left = RESEND_AFTER.toNanos(); left > 0; left = deadline - System.nanoTime()) {
                    selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                    selector.selectedKeys().clear();
                    in.clear();
                    while (receive(channel, in)) {
                        LauncherIdentity identity = answer(in, nodeId, jobId);
                        if (identity != null) {
                            return identity;
                        }
                        in.clear();
                    }
                }
            }
        }
        throw new IOException("node " + nodeName + " (" + node + ") did not answer a MUNGE request in "
                + (RESENDS + 1) * RESEND_AFTER.toSeconds() + " s");
    }

    /** @return whether a datagram was received into {@code in} (flipped); an unreachable port is no datagram */
    private static boolean receive(DatagramChannel channel, ByteBuffer in) {
        try {
            if (channel.receive(in) == null) {
                return false;
            }
        } catch (IOException e) {
            return false;
        }
        in.flip();
        return true;
    }

    /** @return a request: the header as 3.1 says, a fresh MUNGE credential, the MAC field zero */
    static ByteBuffer request(long nodeId, long jobId, long nonce) throws IOException {
        String line = LINE + " " + hex(nodeId) + " " + hex(jobId) + " " + hex(nonce);
        byte[] credential = encode(line.getBytes(StandardCharsets.US_ASCII), -1);
        ByteBuffer out = ByteBuffer.allocate(HEADER_LENGTH + credential.length + MAC_LENGTH)
                .order(ByteOrder.LITTLE_ENDIAN);
        new V2HeaderFlyweight().wrap(out, 0).reset(OP_CREDENTIAL, FLAG_MUNGE).keyId(JobCredential.JOB_KEY_ID)
                .nodeId(nodeId).jobId(jobId).timestamp(System.currentTimeMillis()).nonce(nonce)
                .payloadLength(credential.length);
        out.put(HEADER_LENGTH, credential);
        return out;
    }

    /**
     * @return the identity a node's answer gives, or {@code null} when it is none: not a MUNGE
     *         CREDENTIAL reply of that node, not decoded, for another job, or its MAC does not verify
     */
    static LauncherIdentity answer(ByteBuffer in, long nodeId, long jobId) {
        int length = in.remaining();
        if (length < HEADER_LENGTH + MAC_LENGTH) {
            return null;
        }
        V2HeaderFlyweight header = new V2HeaderFlyweight().wrap(in, 0);
        if (header.datagramLength() != length || header.operation() != OP_CREDENTIAL
                || header.flags() != (FLAG_REPLY | FLAG_MUNGE) || header.keyId() != JobCredential.JOB_KEY_ID
                || header.result() != 0 || (jobId != 0 && header.jobId() != jobId)) {
            return null;
        }
        byte[] text = new byte[header.payloadLength()];
        in.get(HEADER_LENGTH, text);
        byte[] inner;
        try {
            inner = decode(text);
        } catch (IOException e) {
            return null;
        }
        if (inner.length != JobCredential.LENGTH + JOB_KEY_LENGTH) {
            return null;
        }
        byte[] credential = Arrays.copyOf(inner, JobCredential.LENGTH);
        byte[] jobKey = Arrays.copyOfRange(inner, JobCredential.LENGTH, inner.length);
        long credentialJob = ByteBuffer.wrap(credential).order(ByteOrder.LITTLE_ENDIAN).getLong(JOB_ID_OFFSET);
        V2Authenticator check = new V2Authenticator(JobCredential.hostKeys(jobKey), nodeId, SKEW_MILLIS, 1);
        if (credentialJob != header.jobId() || credentialJob == 0
                || check.verifyReply(in, 0, length, System.currentTimeMillis()) != V2Authenticator.OK) {
            return null;
        }
        return new LauncherIdentity(null, credentialJob, JobCredential.hostKeys(jobKey),
                new V2Credential(credentialJob, credential, jobKey));
    }

    /**
     * @param payload       what the credential carries
     * @param restrictToUid the only uid that may decode it, or -1 for anyone
     * @return a MUNGE credential of this process's user, its text form
     * @throws IOException when {@code munge} fails (its message)
     */
    static byte[] encode(byte[] payload, long restrictToUid) throws IOException {
        List<String> command = new ArrayList<>(List.of("munge"));
        if (restrictToUid >= 0) {
            command.addAll(List.of("-u", Long.toString(restrictToUid)));
        }
        String text = new String(run(command, payload), StandardCharsets.US_ASCII).strip();
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * @param credential a MUNGE credential's text form
     * @return its payload
     * @throws IOException when {@code unmunge} refuses it or fails (its message)
     */
    static byte[] decode(byte[] credential) throws IOException {
        return run(List.of("unmunge", "-m", "/dev/null"), credential);
    }

    /** Runs a MUNGE program with {@code input} on its standard input; @return its standard output */
    private static byte[] run(List<String> command, byte[] input) throws IOException {
        Process process;
        try {
            process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.PIPE).start();
        } catch (IOException e) {
            throw new IOException(command.get(0) + " cannot be run: " + e.getMessage(), e);
        }
        try (OutputStream stdin = process.getOutputStream()) {
            stdin.write(input);
        } catch (IOException e) {
            // the program ended without reading: its status says why
        }
        try (InputStream stdout = process.getInputStream(); InputStream stderr = process.getErrorStream()) {
            byte[] output = stdout.readAllBytes();
            String error = new String(stderr.readAllBytes(), StandardCharsets.UTF_8).strip();
            if (!process.waitFor(PROGRAM_WAIT.toSeconds(), TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IOException(command.get(0) + " did not end in " + PROGRAM_WAIT.toSeconds() + " s");
            }
            if (process.exitValue() != 0) {
                throw new IOException(error.isEmpty() ? command.get(0) + " failed with status " + process.exitValue()
                        : error.lines().findFirst().orElse(error));
            }
            return output;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            throw new IOException(command.get(0) + " was interrupted", e);
        }
    }

    private static String hex(long value) {
        return String.format("%016x", value);
    }
}
