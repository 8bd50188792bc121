package dev.gantry.placement.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Layering, checked on the sources (imports): the domain is plain Java; packing (the shared
 * greedy machinery) knows no solver; the solver knows no planner (no package cycle); only the
 * solver and the planner that runs it know Timefold; only the codec knows Jackson.
 */
class ArchitectureTest {
    private static final Path MAIN = Path.of("src/main/java/dev/gantry/placement/engine");

    @ParameterizedTest(name = "{0} does not import {1}")
    @CsvSource({
        "domain, ai.timefold",
        "domain, com.fasterxml",
        "domain, dev.gantry.placement.engine.planner",
        "domain, dev.gantry.placement.engine.solver",
        "validation, ai.timefold",
        "validation, com.fasterxml",
        "json, ai.timefold",
        "cli, ai.timefold",
        "solver, com.fasterxml",
        "planner, com.fasterxml",
        "packing, ai.timefold",
        "packing, dev.gantry.placement.engine.planner",
        "packing, dev.gantry.placement.engine.solver",
        "solver, dev.gantry.placement.engine.planner",
    })
    void packageDoesNotImport(String pkg, String forbidden) throws IOException {
        List<Path> sources;
        try (Stream<Path> files = Files.walk(MAIN.resolve(pkg))) {
            sources = files.filter(f -> f.toString().endsWith(".java")).toList();
        }
        assertThat(sources).isNotEmpty();
        for (Path f : sources) {
            assertThat(Files.readAllLines(f)).as(f.toString())
                    .noneMatch(line -> line.startsWith("import " + forbidden) || line.startsWith("import static " + forbidden));
        }
    }
}
