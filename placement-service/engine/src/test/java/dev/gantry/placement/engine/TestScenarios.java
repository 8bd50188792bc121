package dev.gantry.placement.engine;

import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.json.PlanCodec;
import dev.gantry.placement.engine.json.ScenarioCodec;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Scenario fixtures and the independent checker, shared by the tests. */
public final class TestScenarios {
    /** The shared examples, resolved from the module dir (surefire's working dir) up to the repo's sibling. */
    public static final Path SHARED_EXAMPLES = Path.of("../../../shared/scenarios/examples");
    public static final Path CHECKER = Path.of("../../../shared/tools/check_plan.py");
    public static final List<String> EXAMPLES = List.of("frag-migrate-small", "random-64-nodes", "seed-volcano-example", "type-flex");

    private TestScenarios() {
    }

    public static String json(String name) {
        try (InputStream in = TestScenarios.class.getResourceAsStream("/scenarios/" + name + ".json")) {
            if (in == null) {
                throw new IllegalArgumentException("no fixture " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static Scenario load(String name) {
        return ScenarioCodec.read(json(name));
    }

    public static boolean checkerAvailable() {
        if (!Files.isRegularFile(CHECKER)) {
            return false;
        }
        try {
            return new ProcessBuilder("python3", "--version").start().waitFor() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    /** Runs check_plan.py; returns its last line (the JSON figures) and exit code. */
    public record CheckerVerdict(int exitCode, String output) {
        public boolean valid() {
            return exitCode == 0;
        }
    }

    public static CheckerVerdict check(String scenarioJson, Plan plan) {
        try {
            Path dir = Files.createTempDirectory("gantry-check");
            Path sc = dir.resolve("scenario.json");
            Path pl = dir.resolve("plan.json");
            Files.writeString(sc, scenarioJson);
            Files.writeString(pl, PlanCodec.write(plan));
            Process p = new ProcessBuilder("python3", CHECKER.toString(), sc.toString(), pl.toString()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("checker timed out");
            }
            Files.delete(sc);
            Files.delete(pl);
            Files.delete(dir);
            return new CheckerVerdict(p.exitValue(), out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
