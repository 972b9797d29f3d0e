package org.mpiproxy.examples;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

import net.jpountz.lz4.LZ4FrameOutputStream;

/**
 * Build step (run by exec-maven-plugin in {@code package}): turns the shaded jar into the
 * shipped programs. For each {@code NAME=MAIN_CLASS} it writes {@code NAME} = shell stub + jar
 * (mode 0755) and {@code NAME.lz4} = the same bytes as an LZ4 frame; each {@code copy=FILE}
 * is copied as is.
 * <p>
 * Usage: {@code ProgramImageTool JAR OUTPUT_DIR NAME=MAIN_CLASS... [copy=FILE...]}
 */
public final class ProgramImageTool {

    private ProgramImageTool() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 3) {
            throw new IllegalArgumentException("usage: ProgramImageTool JAR OUTPUT_DIR NAME=MAIN_CLASS... [copy=FILE...]");
        }
        byte[] jar = Files.readAllBytes(Path.of(args[0]));
        Path dir = Files.createDirectories(Path.of(args[1]));
        for (int i = 2; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            if (eq < 1) {
                throw new IllegalArgumentException("expected NAME=MAIN_CLASS or copy=FILE, got '" + args[i] + "'");
            }
            String name = args[i].substring(0, eq);
            String value = args[i].substring(eq + 1);
            if (name.equals("copy")) {
                Path source = Path.of(value);
                Files.copy(source, dir.resolve(source.getFileName()), StandardCopyOption.REPLACE_EXISTING,
                        StandardCopyOption.COPY_ATTRIBUTES);
            } else {
                writeProgram(dir, name, value, jar);
            }
        }
    }

    /**
     * Writes the executable and its image.
     *
     * @return the executable
     */
    static Path writeProgram(Path dir, String name, String mainClass, byte[] jar) throws IOException {
        byte[] stub = stub(name, mainClass).getBytes(StandardCharsets.UTF_8);
        byte[] program = new byte[stub.length + jar.length];
        System.arraycopy(stub, 0, program, 0, stub.length);
        System.arraycopy(jar, 0, program, stub.length, jar.length);
        Path file = dir.resolve(name);
        Files.write(file, program);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        try (OutputStream out = new LZ4FrameOutputStream(Files.newOutputStream(dir.resolve(name + ".lz4")),
                LZ4FrameOutputStream.BLOCKSIZE.SIZE_64KB, program.length,
                LZ4FrameOutputStream.FLG.Bits.BLOCK_INDEPENDENCE, LZ4FrameOutputStream.FLG.Bits.CONTENT_SIZE,
                LZ4FrameOutputStream.FLG.Bits.CONTENT_CHECKSUM)) {
            out.write(program);
        }
        return file;
    }

    /**
     * The shell stub: the jar that follows it is still a valid zip for the JVM, whose zip
     * reader finds the central directory from the end and allows leading bytes.
     */
    static String stub(String name, String mainClass) {
        return "#!/bin/sh\n"
                + "# " + name + ": an MPI proxy program. This file is a shell script followed by a Java archive.\n"
                + "# Rank 0: " + name + " HOSTFILE ARGS...   Ranks are started by the proxies with --slave.\n"
                + ": \"${MPIPROXY_PROGRAM:=$(basename \"$0\")}\"\n"
                + "export MPIPROXY_PROGRAM\n"
                + "if [ -n \"$JAVA_HOME\" ]; then JAVA=\"$JAVA_HOME/bin/java\"; else JAVA=java; fi\n"
                + "exec \"$JAVA\" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto -cp \"$0\" " + mainClass
                + " \"$@\"\n";
    }
}
