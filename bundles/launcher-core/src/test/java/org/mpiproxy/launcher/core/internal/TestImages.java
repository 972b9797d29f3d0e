package org.mpiproxy.launcher.core.internal;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import net.jpountz.lz4.LZ4FrameOutputStream;

/** LZ4 program images of shell scripts, and named-pipe readiness signals, for tests. */
final class TestImages {

    private TestImages() {
    }

    static String script(String body) {
        return "#!/bin/sh\n" + body;
    }

    static Path writeImage(Path directory, String program, byte[] content) throws IOException {
        Path image = directory.resolve(program + ".lz4");
        try (OutputStream out = new LZ4FrameOutputStream(Files.newOutputStream(image))) {
            out.write(content);
        }
        return image;
    }

    static Path writeImage(Path directory, String program, String script) throws IOException {
        return writeImage(directory, program, script.getBytes(StandardCharsets.UTF_8));
    }
}
