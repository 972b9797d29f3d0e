package org.mpiproxy.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The project's rule for its production code (docs/architecture.md): no class over 500 lines
 * unless its class comment says why, in a sentence that starts "Longer than 500 lines for a
 * reason". Reads every {@code src/main} Java file of the checkout this module is in.
 */
class SourceSizesIT {

    static final int LIMIT = 500;
    static final String REASON = "Longer than 500 lines for a reason";

    @Test
    void shouldKeepEveryProductionClassWithinTheLimitOrSayWhyAtItsTop() throws IOException {
        Path root = Paths.get("..").toAbsolutePath().normalize();
        List<Path> sources = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root)) {
            files.filter(p -> p.toString().endsWith(".java") && p.toString().contains("/src/main/")
                    && !p.toString().contains("/target/")).forEach(sources::add);
        }
        assertTrue(sources.size() > 100, "the checkout's sources were found under " + root + ": " + sources.size());
        List<String> unexplained = new ArrayList<>();
        for (Path source : sources) {
            List<String> lines = Files.readAllLines(source);
            if (lines.size() > LIMIT && lines.stream().limit(80).noneMatch(l -> l.contains(REASON))) {
                unexplained.add(root.relativize(source) + " (" + lines.size() + " lines)");
            }
        }
        assertEquals(List.of(), unexplained, "classes over " + LIMIT + " lines without a reason at their top");
    }
}
