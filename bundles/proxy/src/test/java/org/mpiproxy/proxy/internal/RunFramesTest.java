package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.channels.ReadableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

/** The frames of a run through the local socket, against the examples of docs/protocol-v2.md 4.4. */
class RunFramesTest {

    /** The hex example {@code name} of the specification, as bytes. */
    static byte[] documented(String name) throws IOException {
        String doc = Files.readString(Path.of("../../docs/protocol-v2.md"), StandardCharsets.UTF_8);
        Matcher m = Pattern.compile("```hex example=" + name + "\\n(.*?)```", Pattern.DOTALL).matcher(doc);
        assertTrue(m.find(), "the document has no example " + name);
        StringBuilder hex = new StringBuilder();
        for (String line : m.group(1).split("\n")) {
            if (!line.isBlank()) {
                hex.append(line.strip().substring(4).replace(" ", ""));
            }
        }
        return HexFormat.of().parseHex(hex.toString());
    }

    private static void put(ByteArrayOutputStream to, byte type, String text) {
        ByteBuffer frame = RunFrames.encode(type, text);
        to.write(frame.array(), 0, frame.limit());
    }

    private static ReadableByteChannel channel(byte[] bytes) {
        return Channels.newChannel(new java.io.ByteArrayInputStream(bytes));
    }

    @Test
    void shouldEncodeTheFrontsExampleAsDocumented() throws IOException {
        ByteArrayOutputStream front = new ByteArrayOutputStream();
        front.writeBytes((RunFrames.RUN_LINE + "\n").getBytes(StandardCharsets.US_ASCII));
        put(front, RunFrames.ARG, "run");
        put(front, RunFrames.ARG, "hostname");
        put(front, RunFrames.ENV, "HOME=/root");
        put(front, RunFrames.CWD, "/root");
        put(front, RunFrames.PID, "4242");
        put(front, RunFrames.GO, "");

        assertEquals(HexFormat.of().formatHex(documented("run-front")), HexFormat.of().formatHex(front.toByteArray()));
    }

    @Test
    void shouldDecodeTheProxysExampleAsDocumented() throws IOException {
        ReadableByteChannel in = channel(documented("run-proxy"));
        ByteBuffer none = ByteBuffer.allocate(0);

        RunFrames.Frame out = RunFrames.read(none, in);
        RunFrames.Frame exit = RunFrames.read(none, in);

        assertEquals(RunFrames.OUT, out.type());
        assertEquals("[0] node1\n", out.text());
        assertEquals(RunFrames.EXIT, exit.type());
        assertArrayEquals(new byte[] {0}, exit.body());
        assertNull(RunFrames.read(none, in), "the end of the stream between frames");
    }

    @Test
    void shouldReadPendingBytesBeforeTheChannel() throws IOException {
        byte[] frame = RunFrames.encode(RunFrames.SIGNAL, new byte[] {15}, 0, 1).array();
        ByteBuffer pending = ByteBuffer.wrap(frame, 0, 3).slice();

        RunFrames.Frame f = RunFrames.read(pending, channel(java.util.Arrays.copyOfRange(frame, 3, frame.length)));

        assertEquals(RunFrames.SIGNAL, f.type());
        assertArrayEquals(new byte[] {15}, f.body());
    }

    @Test
    void shouldRefuseAnEndWithinAFrameAndAnOversizedBody() {
        byte[] cut = java.util.Arrays.copyOf(RunFrames.encode(RunFrames.ARG, "run").array(), 6);
        assertThrows(EOFException.class, () -> RunFrames.read(ByteBuffer.allocate(0), channel(cut)));

        byte[] huge = ByteBuffer.allocate(5).order(ByteOrder.LITTLE_ENDIAN).put(RunFrames.ARG)
                .putInt(RunFrames.MAX_BODY + 1).array();
        IOException e = assertThrows(IOException.class, () -> RunFrames.read(ByteBuffer.allocate(0), channel(huge)));
        assertEquals("a frame of " + (RunFrames.MAX_BODY + 1) + " bytes; at most " + RunFrames.MAX_BODY,
                e.getMessage());
    }
}
