package dev.gantry.placement.engine.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.TestScenarios;
import dev.gantry.placement.engine.json.PlanCodec;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PlanCommandTest {
    @TempDir
    Path dir;

    private record Run(int code, String out, String err) {
    }

    private Run run(String... args) {
        var out = new ByteArrayOutputStream();
        var err = new ByteArrayOutputStream();
        int code = PlanCommand.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private Path write(String name, String json) throws Exception {
        Path p = dir.resolve(name);
        Files.writeString(p, json);
        return p;
    }

    @Test
    void printsAPlanAndExitsZero() throws Exception {
        Path sc = write("seed.json", TestScenarios.json("seed-volcano-example"));
        for (String planner : new String[] {"greedy", "fifo", "timefold"}) {
            Run r = run("--scenario", sc.toString(), "--planner", planner, "--profile", "fast", "--time-limit", "300ms");
            assertThat(r.code()).as(r.err()).isZero();
            assertThat(PlanCodec.read(r.out()).placements()).hasSize(1);
        }
    }

    @Test
    void invalidScenarioExitsTwoWithOneLineNamingTheField() throws Exception {
        Path sc = write("bad.json", TestScenarios.json("seed-volcano-example").replace("\"gpusPerReplica\": 2", "\"gpusPerReplica\": 99"));
        Run r = run("--scenario", sc.toString(), "--planner", "greedy");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.out()).isEmpty();
        assertThat(r.err().strip()).doesNotContain("\n").contains("pending[0].taskGroups[1].gpusPerReplica: must be 0..64");
    }

    @Test
    void badArgumentsExitTwo() throws Exception {
        Path sc = write("seed.json", TestScenarios.json("seed-volcano-example"));
        assertThat(run("--planner", "greedy").err()).contains("--scenario: is required");
        assertThat(run("--scenario", sc.toString(), "--planner", "magic").err()).contains("--planner: unknown planner magic");
        assertThat(run("--scenario", sc.toString(), "--profile", "slow").err()).contains("--profile: unknown profile slow");
        assertThat(run("--scenario", sc.toString(), "--time-limit", "soon").err()).contains("--time-limit: bad duration soon");
        assertThat(run("--scenario", sc.toString(), "--gpu-speeds", "A100=fast").err()).contains("--gpu-speeds: GPU speed \"A100=fast\": fast is not a number");
        assertThat(run("--scenario", sc.toString(), "--move-weights", "1000").err()).contains("--move-weights: expected PER_MOVE,PER_GPU");
        assertThat(run("--scenario", dir.resolve("missing.json").toString()).err()).contains("--scenario: cannot read");
        assertThat(run("--scenario", sc.toString(), "--bogus", "1").code()).isEqualTo(2);
        assertThat(run("--scenario").code()).isEqualTo(2);
    }

    @Test
    void moveWeightsChooseWhichJobsMakeRoom() throws Exception {
        // fixture migration-cost-choice (MoveCostTest): one 4-GPU job or two 1-GPU jobs can make room for an 8-GPU job
        Path sc = write("choice.json", TestScenarios.json("migration-cost-choice"));
        Run byDefault = run("--scenario", sc.toString(), "--profile", "fast", "--time-limit", "3s");
        assertThat(byDefault.code()).as(byDefault.err()).isZero();
        assertThat(PlanCodec.read(byDefault.out()).migrations()).extracting(m -> m.job()).containsExactly("big");
        Run perGpu = run("--scenario", sc.toString(), "--profile", "fast", "--time-limit", "3s", "--move-weights", "0,20000");
        assertThat(perGpu.code()).as(perGpu.err()).isZero();
        assertThat(PlanCodec.read(perGpu.out()).migrations()).extracting(m -> m.job()).containsExactlyInAnyOrder("small-a", "small-b");
    }
}
