package org.mpiproxy.cli;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * A running job as {@code mpiproxy run --job-file} describes it.
 *
 * @param launcherPid the launcher's process id
 * @param rankZeroPid rank 0's process id
 * @param hostPort    the UDP port rank 0 sends from (the job's owner on every proxy)
 * @param ranks       placement of rank r at element r-1
 * @param protocol    {@code v1} or {@code v2}
 * @param jobId       v2: the job id; v1: 0
 * @param keySpec     v2: the key file list the job used, else {@code null}
 */
record JobFile(long launcherPid, long rankZeroPid, int hostPort, List<Placement> ranks, String protocol, long jobId,
               String keySpec) {

    JobFile(long launcherPid, long rankZeroPid, int hostPort, List<Placement> ranks) {
        this(launcherPid, rankZeroPid, hostPort, ranks, "v1", 0, null);
    }

    boolean v2() {
        return "v2".equals(protocol);
    }

    /**
     * @param file the job file
     * @return its content
     * @throws IOException              when it cannot be read
     * @throws IllegalArgumentException when it is malformed or does not exist
     */
    static JobFile read(Path file) throws IOException {
        Properties p = new Properties();
        try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(in);
        } catch (NoSuchFileException e) {
            throw missing(file);
        }
        try {
            String protocol = p.getProperty("protocol");
            if (!"v1".equals(protocol) && !"v2".equals(protocol)) {
                throw new IllegalArgumentException("protocol=" + protocol + " is neither v1 nor v2");
            }
            long jobId = 0;
            String keySpec = null;
            if (protocol.equals("v2")) {
                jobId = Long.parseUnsignedLong(p.getProperty("job.id"), 16);
                keySpec = p.getProperty("key.files");
            }
            int size = Integer.parseInt(p.getProperty("world.size"));
            List<Placement> ranks = new ArrayList<>();
            for (int r = 1; r < size; r++) {
                String value = p.getProperty("rank." + r);
                String[] f = value.split(" ", 2);
                Hostfiles.Content c = Hostfiles.parse(file + " rank." + r, List.of(f[0]));
                Placement at = c.placements().get(0);
                ranks.add(new Placement(at.address(), at.port(), at.coreId(), f.length > 1 ? f[1] : at.address()));
            }
            return new JobFile(Long.parseLong(p.getProperty("launcher.pid")), Long.parseLong(p.getProperty("rank0.pid")),
                    Integer.parseInt(p.getProperty("host.port")), List.copyOf(ranks), protocol, jobId, keySpec);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("job file " + file + " is malformed: " + e.getMessage(), e);
        }
    }

    private static IllegalArgumentException missing(Path file) {
        return new IllegalArgumentException("job file " + file + " does not exist (written by 'mpiproxy run"
                + " --job-file " + file + "' while the job runs, removed when it ends)");
    }
}
