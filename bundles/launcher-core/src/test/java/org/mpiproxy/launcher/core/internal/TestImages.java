package org.mpiproxy.launcher.core.internal;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

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

    static CompletableFuture<String> readFifo(Path fifo) throws Exception {
        Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start();
        if (!mkfifo.waitFor(10, TimeUnit.SECONDS) || mkfifo.exitValue() != 0) {
            throw new IOException("mkfifo " + fifo + " failed");
        }
        CompletableFuture<String> content = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try {
                content.complete(Files.readString(fifo));
            } catch (IOException e) {
                content.completeExceptionally(e);
            }
        }, "fifo-reader");
        reader.setDaemon(true);
        reader.start();
        return content;
    }

    static String await(Path fifo, CompletableFuture<String> content, Duration timeout) throws Exception {
        try {
            return content.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } finally {
            if (!content.isDone()) {
                try (OutputStream unblock = Files.newOutputStream(fifo)) {
                    unblock.flush();
                }
            }
        }
    }
}
