package org.mpiproxy.process;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Shell-script programs and readiness signals (named pipes) for process tests. */
public final class TestScripts {

    private TestScripts() {
    }

    /**
     * Writes an executable {@code #!/bin/sh} script.
     *
     * @param directory where
     * @param name      file name
     * @param body      script lines after the shebang
     * @return the script
     * @throws IOException when it cannot be written
     */
    public static Path write(Path directory, String name, String body) throws IOException {
        Path file = directory.resolve(name);
        Files.writeString(file, "#!/bin/sh\n" + body, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        return file;
    }

    /**
     * Creates a named pipe and starts reading it: the future completes with what a writer
     * wrote once it closes the pipe.
     *
     * @param fifo path of the pipe to create
     * @return the content written to the pipe
     * @throws Exception when mkfifo fails
     */
    public static CompletableFuture<String> readFifo(Path fifo) throws Exception {
        Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start();
        if (!mkfifo.waitFor(60, TimeUnit.SECONDS) || mkfifo.exitValue() != 0) {
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

    /**
     * Waits for a pipe's content; on timeout releases the reader thread and fails.
     *
     * @param fifo    the pipe
     * @param content its reader
     * @param timeout how long to wait
     * @return what was written
     * @throws Exception on timeout or read failure
     */
    public static String await(Path fifo, CompletableFuture<String> content, Duration timeout) throws Exception {
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
