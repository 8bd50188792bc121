package dev.gantry.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.forecast.StartForecaster;
import dev.gantry.placement.engine.planner.SolverProfile;
import dev.gantry.simulator.cluster.ClusterFile;
import dev.gantry.simulator.replay.ForecastSample;
import dev.gantry.simulator.replay.JobRecord;
import dev.gantry.simulator.replay.Progress;
import dev.gantry.simulator.replay.Replay;
import dev.gantry.simulator.replay.ReplayOptions;
import dev.gantry.simulator.replay.ReplayResult;
import dev.gantry.simulator.report.ForecastAccuracy;
import dev.gantry.simulator.report.PolicyMetrics;
import dev.gantry.simulator.trace.TraceJob;
import dev.gantry.simulator.trace.TraceReaders;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Synthetic traces whose outcome is known by hand; 10 s windows, so starts land on multiples of 10. */
class ReplayTest {
    @TempDir
    Path dir;

    private static final ReplayOptions OPTIONS = new ReplayOptions(10, SolverProfile.FAST.withTimeLimit(Duration.ofMillis(200)), false, true, true);

    private Map<String, JobRecord> replay(ClusterFile cluster, String csv, String policy) throws IOException {
        return replay(cluster, csv, policy, OPTIONS);
    }

    private Map<String, JobRecord> replay(ClusterFile cluster, String csv, String policy, ReplayOptions options) throws IOException {
        List<TraceJob> jobs = TraceReaders.gantryCsv(TestClusters.write(dir, "trace.csv", csv), null, null);
        ReplayResult r = new Replay(cluster, jobs, options).run(policy, Progress.NONE);
        return r.jobs().stream().collect(Collectors.toMap(JobRecord::name, Function.identity()));
    }

    /**
     * One 8-GPU node. a holds 4 GPUs until 1000; b (8 GPUs) cannot start before then; c (2 GPUs,
     * long) and d (2 GPUs, short) would fit at once.
     */
    private static final String HOL = """
            name,submit,duration,gpus
            a,0,1000,4
            b,5,100,8
            c,6,5000,2
            d,7,500,2
            """;

    @Test
    void fifoBlocksEveryJobBehindTheHead() throws IOException {
        var r = replay(TestClusters.eightGpuNodes(1, 1), HOL, "fifo");
        assertThat(r.get("a").firstStart()).isEqualTo(0);
        assertThat(r.get("b").firstStart()).isEqualTo(1000);
        // c and d fit at t=10 but wait behind b, then start when b ends
        assertThat(r.get("c").firstStart()).isEqualTo(1100);
        assertThat(r.get("d").firstStart()).isEqualTo(1100);
    }

    /** timefold reserves for the head as backfill does (the replay supplies the estimated ends). */
    @ParameterizedTest
    @ValueSource(strings = {"backfill", "timefold"})
    void aShortJobJumpsTheQueueWithoutDelayingTheHead(String policy) throws IOException {
        var r = replay(TestClusters.eightGpuNodes(1, 1), HOL, policy);
        // d ends (by its estimate) at 510, before b's reservation at 1000: it jumps the queue
        assertThat(r.get("d").firstStart()).isEqualTo(10);
        // b starts exactly when it would under fifo: nothing delayed it
        assertThat(r.get("b").firstStart()).isEqualTo(1000);
        // c would still run at 1000 and sit on GPUs b has reserved: it waits
        assertThat(r.get("c").firstStart()).isEqualTo(1100);
    }

    /**
     * With exact runtimes and no later arrival ahead of them, the start-time forecast made when a
     * job is first left waiting is its start: b's is its reservation at 1000 (a's end), c's is b's
     * end. a and d are placed in the window that first sees them. In the second trace b still waits
     * an hour after its submission (a runs to 10000); e's arrival at 4000 runs a window, which
     * forecasts b again.
     */
    @Test
    void startForecastsAreCheckedAgainstTheActualStarts() throws IOException {
        ReplayOptions forecasting = new ReplayOptions(10, OPTIONS.profile(), false, true, true, true, null, 1,
                new StartForecaster(100, 7 * 86_400, 1000, 1));
        List<TraceJob> jobs = TraceReaders.gantryCsv(TestClusters.write(dir, "trace.csv", HOL), null, null);
        ReplayResult r = new Replay(TestClusters.eightGpuNodes(1, 1), jobs, forecasting).run("timefold", Progress.NONE);
        Map<String, ForecastSample> atSubmission = r.forecasts().stream().filter(f -> f.when().equals("submission"))
                .collect(Collectors.toMap(ForecastSample::job, Function.identity()));
        assertThat(atSubmission.get("b")).isEqualTo(new ForecastSample("b", "submission", 10, 1000, 1000, false));
        assertThat(atSubmission.get("c")).isEqualTo(new ForecastSample("c", "submission", 10, 1100, 1100, false));
        assertThat(atSubmission.get("a").firstWindow()).isTrue();
        assertThat(atSubmission.get("d")).isEqualTo(new ForecastSample("d", "submission", 10, 10, 10, true));
        assertThat(r.forecasts()).noneMatch(f -> f.when().equals("1h"));

        String longHead = """
                name,submit,duration,gpus
                a,0,10000,4
                b,5,100,8
                e,4000,10,1
                """;
        List<TraceJob> second = TraceReaders.gantryCsv(TestClusters.write(dir, "trace2.csv", longHead), null, null);
        ReplayResult r2 = new Replay(TestClusters.eightGpuNodes(1, 1), second, forecasting).run("timefold", Progress.NONE);
        assertThat(r2.forecasts()).contains(new ForecastSample("b", "1h", 4000, 10_000, 10_000, false));
        ForecastAccuracy hour = ForecastAccuracy.of(r2).get(1);
        assertThat(hour.waiting()).isEqualTo(1);
        assertThat(hour.medianSeconds()).isZero();
    }

    @Test
    void timefoldWithoutItsReservationStarvesTheHeadAsGreedyDoes() throws IOException {
        ReplayOptions noReservation = new ReplayOptions(OPTIONS.windowSeconds(), OPTIONS.profile(), false, true, true, false);
        var r = replay(TestClusters.eightGpuNodes(1, 1), HOL, "timefold", noReservation);
        assertThat(r.get("b").firstStart()).isEqualTo(5010);
    }

    /** timefold with a move-bound solver (--solver-moves) repeats to the second, whatever its deadline. */
    @Test
    void aReplayWithAMoveBoundSolverRepeatsExactly() throws IOException {
        StringBuilder csv = new StringBuilder("name,submit,duration,gpus\n");
        int[] gpus = {3, 5, 2, 8, 1, 6, 4, 2, 7, 3, 16, 1, 5, 2, 4, 8, 3, 6, 2, 1};
        for (int i = 0; i < gpus.length; i++) {
            csv.append("j").append(i).append(',').append(7 * i).append(',').append(300 + 97 * (i % 7)).append(',').append(gpus[i]).append('\n');
        }
        ReplayOptions tight = new ReplayOptions(10, SolverProfile.FAST.withTimeLimit(Duration.ofMillis(1)), false, true, true, true, 2_000L);
        ReplayOptions loose = new ReplayOptions(10, SolverProfile.FAST.withTimeLimit(Duration.ofSeconds(2)), false, true, true, true, 2_000L);
        var first = replay(TestClusters.eightGpuNodes(3, 1), csv.toString(), "timefold", tight);
        var second = replay(TestClusters.eightGpuNodes(3, 1), csv.toString(), "timefold", loose);
        assertThat(first).hasSize(gpus.length).isEqualTo(second);
    }

    /**
     * Two 8-GPU nodes: a and b (6 GPUs each, ending at 1000 and 2000) leave 2 GPUs free on each;
     * g1 (whole node, long) and g2 (whole node, short) wait; L (2 GPUs, long) fits now. With one
     * reservation (g1 on a's node from 1000) L takes the other node's free GPUs and g2 waits until
     * L ends (5010); with two, g2 is reserved on b's node from 2000 and L waits until g2 has run.
     */
    private static final String TWO_GANGS = """
            name,submit,duration,gpus
            a,0,1000,6
            b,0,2000,6
            g1,1,5000,8
            g2,2,100,8
            L,3,5000,2
            """;

    @ParameterizedTest
    @ValueSource(strings = {"backfill", "timefold", "greedy-reserving"})
    void oneReservationLetsALongJobDelayTheSecondGang(String policy) throws IOException {
        var r = replay(TestClusters.eightGpuNodes(2, 1), TWO_GANGS, policy);
        assertThat(r.get("g1").firstStart()).isEqualTo(1000);
        assertThat(r.get("L").firstStart()).isEqualTo(10);
        assertThat(r.get("g2").firstStart()).isEqualTo(5010);
    }

    @ParameterizedTest
    @ValueSource(strings = {"timefold", "greedy-reserving"})
    void twoReservationsKeepTheSecondGangsNodeFromALongJob(String policy) throws IOException {
        ReplayOptions two = new ReplayOptions(OPTIONS.windowSeconds(), OPTIONS.profile(), false, true, true, true, null, 2);
        var r = replay(TestClusters.eightGpuNodes(2, 1), TWO_GANGS, policy, two);
        assertThat(r.get("g1").firstStart()).isEqualTo(1000);
        assertThat(r.get("g2").firstStart()).isEqualTo(2000);
        assertThat(r.get("L").firstStart()).isEqualTo(2100);
    }

    @Test
    void greedyWithoutReservationStarvesTheHead() throws IOException {
        var r = replay(TestClusters.eightGpuNodes(1, 1), HOL, "greedy");
        assertThat(r.get("c").firstStart()).isEqualTo(10);
        assertThat(r.get("d").firstStart()).isEqualTo(10);
        // c holds 2 GPUs until 5010: b, which needs the whole node, waits for it
        assertThat(r.get("b").firstStart()).isEqualTo(5010);
    }

    @ParameterizedTest
    @ValueSource(strings = {"backfill", "timefold"})
    void aLongJobRunsBesideTheReservation(String policy) throws IOException {
        // b needs 4 of the 8 GPUs at 1000; c (long, 2 GPUs) keeps off them, so it may start now
        var r = replay(TestClusters.eightGpuNodes(1, 1), """
                name,submit,duration,gpus
                a,0,1000,6
                b,5,100,4
                c,6,5000,2
                """, policy);
        assertThat(r.get("c").firstStart()).isEqualTo(10);
        assertThat(r.get("b").firstStart()).isEqualTo(1000);
    }

    /**
     * Two leaves of two 8-GPU nodes. b1 (12 GPUs, one leaf) leaves 4 free in its leaf; b2 (8
     * GPUs) fills a node of the other leaf. g (12 GPUs, one leaf) sees 12 free GPUs but no leaf
     * with 12: it waits until b2 ends at 1000 and its leaf is whole again.
     */
    @ParameterizedTest
    @ValueSource(strings = {"fifo", "greedy", "backfill", "timefold"})
    void gangWaitsForAWholeLeaf(String policy) throws IOException {
        var r = replay(TestClusters.eightGpuNodes(2, 2), """
                name,submit,duration,gpus,network
                b1,0,2000,12,leaf
                b2,0,1000,8,
                g,5,300,12,leaf
                """, policy);
        assertThat(r.get("b1").firstStart()).isZero();
        assertThat(r.get("b2").firstStart()).isZero();
        assertThat(r.get("g").firstStart()).isEqualTo(1000);
    }

    @Test
    void theSameGangWithoutTheLeafRequirementStartsAtOnce() throws IOException {
        var r = replay(TestClusters.eightGpuNodes(2, 2), """
                name,submit,duration,gpus,network
                b1,0,2000,12,leaf
                b2,0,1000,8,
                g,5,300,12,
                """, "greedy");
        assertThat(r.get("g").firstStart()).isEqualTo(10);
    }

    @Test
    void withPreemptionTimefoldEvictsForAHigherPriorityJobWhichResumesLater() throws IOException {
        String csv = """
                name,submit,duration,gpus,priority
                low,0,1000,8,0
                high,5,100,8,1000
                """;
        List<TraceJob> jobs = TraceReaders.gantryCsv(TestClusters.write(dir, "p.csv", csv), null, null);
        ReplayOptions preempt = new ReplayOptions(10, SolverProfile.FAST.withTimeLimit(Duration.ofMillis(300)), true, true, true);
        ReplayResult r = new Replay(TestClusters.eightGpuNodes(1, 1), jobs, preempt).run("timefold", Progress.NONE);
        Map<String, JobRecord> byName = r.jobs().stream().collect(Collectors.toMap(JobRecord::name, Function.identity()));
        assertThat(r.preemptions()).isEqualTo(1);
        assertThat(byName.get("high").firstStart()).isEqualTo(10);
        assertThat(byName.get("low").preemptions()).isEqualTo(1);
        // checkpointed at 10 after 10 s of work: 990 s left, resumed when high ends at 110
        assertThat(byName.get("low").end()).isEqualTo(1100);
        // greedy never preempts: high waits for low
        ReplayResult g = new Replay(TestClusters.eightGpuNodes(1, 1), jobs, preempt).run("greedy", Progress.NONE);
        assertThat(g.preemptions()).isZero();
        assertThat(g.jobs().stream().filter(j -> j.name().equals("high")).findFirst().orElseThrow().firstStart()).isEqualTo(1000);
    }

    @Test
    void lasEvictsAJobThatHasHadItsShareForANewOne() throws IOException {
        String csv = """
                name,submit,duration,gpus
                long,0,10000,8
                short,5000,100,8
                """;
        List<TraceJob> jobs = TraceReaders.gantryCsv(TestClusters.write(dir, "las.csv", csv), null, null);
        ReplayOptions preempt = new ReplayOptions(10, OPTIONS.profile(), true, true, true);
        ReplayResult r = new Replay(TestClusters.eightGpuNodes(1, 1), jobs, preempt).run("las", Progress.NONE);
        Map<String, JobRecord> byName = r.jobs().stream().collect(Collectors.toMap(JobRecord::name, Function.identity()));
        // at 5000 long has 40,000 GPU-s (above the 3,600 threshold), short none: short takes the node
        assertThat(byName.get("short").firstStart()).isEqualTo(5000);
        assertThat(r.preemptions()).isEqualTo(1);
        // long resumes at 5100 with 5000 s left
        assertThat(byName.get("long").end()).isEqualTo(10100);
        // without preemption las can only reorder the queue: short waits
        ReplayResult n = new Replay(TestClusters.eightGpuNodes(1, 1), jobs, OPTIONS).run("las", Progress.NONE);
        assertThat(n.preemptions()).isZero();
        assertThat(n.jobs().stream().filter(j -> j.name().equals("short")).findFirst().orElseThrow().firstStart()).isEqualTo(10000);
    }

    @Test
    void metricsAndLowerBoundsOfAKnownRun() throws IOException {
        List<TraceJob> jobs = TraceReaders.gantryCsv(TestClusters.write(dir, "t.csv", HOL), null, null);
        ReplayResult r = new Replay(TestClusters.eightGpuNodes(1, 1), jobs, OPTIONS).run("fifo", Progress.NONE);
        PolicyMetrics m = PolicyMetrics.of(r);
        // delays: a 0, b 995, c 1094, d 1093
        assertThat(m.delayMean()).isEqualTo((0 + 995 + 1094 + 1093) / 4.0);
        assertThat(m.delayMax()).isEqualTo(1094);
        assertThat(m.jctMeanLowerBound()).isEqualTo((1000 + 100 + 5000 + 500) / 4.0);
        assertThat(m.jctMean()).isGreaterThanOrEqualTo(m.jctMeanLowerBound());
        // c ends last: 1100 + 5000
        assertThat(m.makespan()).isEqualTo(6100);
        // GPU-time 4000 + 800 + 10000 + 1000 = 15800 over 8 GPUs = 1975 s; latest submit+duration 5006
        assertThat(m.makespanLowerBound()).isEqualTo(5006);
        assertThat(m.finished()).isEqualTo(4);
        assertThat(m.preemptions()).isZero();
    }

    /**
     * Two 8-GPU nodes, eight 2-GPU jobs; the short ones end at 100 and leave 4 + 4 GPUs free between
     * long ones. An 8-GPU job arriving at 1000 waits for a long job to end, unless the long jobs are
     * migratable: then two of them move (each losing 300 s) and it starts in its first window.
     */
    @Test
    void migratableJobsMoveToPlaceAWholeNodeJobAndEachMoveCostsTheMovedJob() throws IOException {
        String csv = """
                name,submit,duration,gpus
                a,0,100000,2
                b,0,100,2
                c,0,100000,2
                d,0,100,2
                e,0,100000,2
                f,0,100,2
                g,0,100000,2
                h,0,100,2
                w,1000,500,8
                """;
        List<TraceJob> jobs = TraceReaders.gantryCsv(TestClusters.write(dir, "moves.csv", csv), null, null);
        ReplayOptions reproducible = new ReplayOptions(10, OPTIONS.profile(), false, true, true, true, 2_000L);
        ReplayResult still = new Replay(TestClusters.eightGpuNodes(2, 1), jobs, reproducible).run("timefold", Progress.NONE);
        ReplayResult moving = new Replay(TestClusters.eightGpuNodes(2, 1), jobs, reproducible.withMigration(1.0, 300))
                .run("timefold", Progress.NONE);
        long waitedStill = still.jobs().stream().filter(j -> j.name().equals("w")).findFirst().orElseThrow().firstStart();
        long waitedMoving = moving.jobs().stream().filter(j -> j.name().equals("w")).findFirst().orElseThrow().firstStart();
        assertThat(still.migrations()).isZero();
        assertThat(waitedStill).as("without moves it waits for a long job").isGreaterThanOrEqualTo(100_000);
        assertThat(moving.migrations()).isEqualTo(2);
        assertThat(waitedMoving).as("two moves place it in its first window").isEqualTo(1000);
        long longEnds = moving.jobs().stream().filter(j -> List.of("a", "c", "e", "g").contains(j.name()))
                .mapToLong(JobRecord::end).filter(end -> end == 100_000 + 300).count();
        assertThat(longEnds).as("each moved job ends 300 s later").isEqualTo(2);
    }

    @Test
    void openbWithItsTimesStartsASliceOnThePodsStillRunning() throws IOException {
        String csv = """
                name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
                early-gone,1000,1024,1,1000,,LS,Succeeded,0,50,0
                early-running,2000,2048,2,1000,,LS,Running,10,500,10
                shared,3000,4096,1,300,V100M16|V100M32,LS,Running,150,400,150
                later,1000,1024,8,1000,,LS,Running,300,301,300
                """;
        List<TraceJob> jobs = TraceReaders.openbTimed(TestClusters.write(dir, "timed.csv", csv), 100L, 300L);
        assertThat(jobs).extracting(TraceJob::name).containsExactly("early-running", "shared");
        TraceJob running = jobs.get(0);
        assertThat(running.submitSeconds()).as("arrives when the slice starts").isEqualTo(100);
        assertThat(running.durationSeconds()).as("for what is left of its run").isEqualTo(400);
        assertThat(running.taskGroups().getFirst().gpusPerReplica()).isEqualTo(2);
        assertThat(running.taskGroups().getFirst().cpuMillis()).isEqualTo(2000);
        TraceJob shared = jobs.get(1);
        assertThat(shared.taskGroups().getFirst().gpuMilli()).isEqualTo(300);
        assertThat(shared.gpuModels()).containsExactly("V100M16", "V100M32");
        assertThat(shared.durationSeconds()).isEqualTo(250);
    }
}
