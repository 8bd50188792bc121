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

    @Test
    void reclaimTowardTheFairShareIsAnOption() throws Exception {
        // team-a holds both 8-GPU nodes at priority 500; team-b waits with 8 GPUs at priority 100; equal weights, no guarantees
        java.util.function.BiFunction<String, String, dev.gantry.placement.engine.domain.RunningJob> teamA = (name, node) ->
                new dev.gantry.placement.engine.domain.RunningJob(name, "team-a", 500, true, false, false, 9000,
                        java.util.List.of(new dev.gantry.placement.engine.domain.RunningTask("w-0", node, java.util.List.of(0, 1, 2, 3, 4, 5, 6, 7),
                                1000, 1000, null)));
        java.util.function.Function<String, dev.gantry.placement.engine.domain.Node> node = name -> new dev.gantry.placement.engine.domain.Node(
                name, "V100", 8, null, null, 64_000, 512_000, null, null, null, null, true, false);
        var scenario = new dev.gantry.placement.engine.domain.Scenario(dev.gantry.placement.engine.domain.Scenario.FORMAT, "fair", 10_000,
                java.util.List.of(node.apply("n1"), node.apply("n2")),
                java.util.List.of(new dev.gantry.placement.engine.domain.Queue("team-a", 1, 0, null, true, null),
                        new dev.gantry.placement.engine.domain.Queue("team-b", 1, 0, null, true, null)),
                java.util.List.of(teamA.apply("a-1", "n1"), teamA.apply("a-2", "n2")),
                java.util.List.of(new dev.gantry.placement.engine.domain.PendingJob("b-1", "team-b", 100, 9900,
                        java.util.List.of(new dev.gantry.placement.engine.domain.TaskGroup("w", 1, 8, 1000, 1000, null)), 1, null, null, null,
                        false, null, null, true, true, 3600L)));
        Path sc = write("fair.json", dev.gantry.placement.engine.json.ScenarioCodec.write(scenario));

        Run off = run("--scenario", sc.toString(), "--profile", "fast", "--time-limit", "1s");
        assertThat(off.code()).as(off.err()).isZero();
        assertThat(PlanCodec.read(off.out()).placements()).isEmpty();
        Run on = run("--scenario", sc.toString(), "--profile", "fast", "--time-limit", "1s", "--reclaim-toward-fair-share", "true");
        assertThat(on.code()).as(on.err()).isZero();
        assertThat(PlanCodec.read(on.out()).placements()).hasSize(1);
        assertThat(PlanCodec.read(on.out()).preemptions()).hasSize(1);
        Run bad = run("--scenario", sc.toString(), "--reclaim-toward-fair-share", "yes");
        assertThat(bad.code()).isEqualTo(2);
        assertThat(bad.err()).contains("--reclaim-toward-fair-share: true or false, not yes");
    }
}
