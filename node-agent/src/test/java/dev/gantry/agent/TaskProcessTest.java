package dev.gantry.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Real processes: what a task sees, what its exit says, and how it is stopped. */
class TaskProcessTest {

    @TempDir
    Path dir;

    private TaskProcess.Spec spec(String script, Map<String, String> env) {
        return new TaskProcess.Spec(List.of("sh", "-c", script), env, dir.resolve("work"), dir.resolve("logs/task.log"));
    }

    private static Assignment assignment(List<Integer> gpus, int rank, int world) {
        return new Assignment(UUID.fromString("7b0c4f8e-5a8d-4a43-9d3e-0f6f1c2b3a4d"), "train", 1733500000000L, "worker-" + rank,
                "worker", List.of("ignored"), gpus, null, 0, 0, rank, world, 0, 1, rank, world, "10.0.0.5", 23456, false, null, false, 0,
                null, null);
    }

    @Test
    void theTaskSeesExactlyItsGpusAndItsPlaceInTheGang() throws Exception {
        Path checkpoints = dir.resolve("ckpt");
        Map<String, String> env = assignment(List.of(2, 5), 1, 2).environment(checkpoints);
        TaskProcess p = TaskProcess.start(spec("echo \"rank=$RANK world=$WORLD_SIZE gpus=$CUDA_VISIBLE_DEVICES nv=$NVIDIA_VISIBLE_DEVICES "
                + "local=$LOCAL_RANK node=$NODE_RANK master=$MASTER_ADDR:$MASTER_PORT job=$GANTRY_JOB_ID task=$GANTRY_TASK "
                + "ckpt=$GANTRY_CHECKPOINT_DIR cwd=$(pwd)\"", env));
        assertThat(p.exit().get(10, TimeUnit.SECONDS)).isZero();
        String log = Files.readString(dir.resolve("logs/task.log"));
        assertThat(log.strip()).isEqualTo("rank=1 world=2 gpus=2,5 nv=2,5 local=0 node=1 master=10.0.0.5:23456 "
                + "job=7b0c4f8e-5a8d-4a43-9d3e-0f6f1c2b3a4d task=worker-1 ckpt=" + checkpoints + " cwd=" + dir.resolve("work").toRealPath());
    }

    @Test
    void theGraceIsTheJobsCheckpointGraceElseTheAgentsDefault() {
        Assignment plain = assignment(List.of(0), 0, 1);
        assertThat(plain.grace(Duration.ofSeconds(10))).isEqualTo(Duration.ofSeconds(10));
        Assignment own = new Assignment(plain.jobId(), "train", 1L, "worker-0", "worker", List.of("x"), List.of(0), null, 0, 0, 0, 1, 0,
                1, 0, 1, "a", 1, true, 45, false, 0, null, null);
        assertThat(own.grace(Duration.ofSeconds(10))).isEqualTo(Duration.ofSeconds(45));
    }

    @Test
    void theJobsEnvironmentIsUnderGantrysOwnAndTheTaskRunsInTheSpecsWorkingDirectory() throws Exception {
        Assignment base = assignment(List.of(3), 0, 1);
        Assignment withEnv = new Assignment(base.jobId(), "train", 1L, "worker-0", "worker", List.of("x"), List.of(3), null, 0, 0, 0, 1, 0,
                1, 0, 1, "a", 1, false, null, false, 0, null, null, null, dir.toString(), Map.of("EPOCHS", "90", "RANK", "7"));
        Map<String, String> env = withEnv.environment(dir.resolve("ckpt"));
        assertThat(env).containsEntry("EPOCHS", "90").containsEntry("RANK", "0").containsEntry("CUDA_VISIBLE_DEVICES", "3");
        TaskProcess p = TaskProcess.start(new TaskProcess.Spec(List.of("sh", "-c", "echo \"$EPOCHS $(pwd)\""), env,
                Path.of(withEnv.workingDir()), dir.resolve("logs/task.log")));
        assertThat(p.exit().get(10, TimeUnit.SECONDS)).isZero();
        assertThat(Files.readString(dir.resolve("logs/task.log")).strip()).isEqualTo("90 " + dir.toRealPath());
    }

    @Test
    void aTaskOnMigDevicesSeesExactlyThemByUuid() {
        Assignment base = assignment(List.of(), 0, 1);
        Assignment onMig = new Assignment(base.jobId(), "train", 1L, "worker-0", "worker", List.of("x"), List.of(), null, 0, 0, 0, 1, 0,
                1, 0, 1, "a", 1, false, null, false, 0, null, null, null, null, null,
                List.of("MIG-5c9a2b3e-8f1d-5a7e-9b3c-2d4e6f8a1b2c", "MIG-0a1b2c3d-4e5f-5a6b-8c7d-9e0f1a2b3c4d"));
        assertThat(onMig.environment(dir))
                .containsEntry("CUDA_VISIBLE_DEVICES", "MIG-5c9a2b3e-8f1d-5a7e-9b3c-2d4e6f8a1b2c,MIG-0a1b2c3d-4e5f-5a6b-8c7d-9e0f1a2b3c4d")
                .containsEntry("NVIDIA_VISIBLE_DEVICES", "MIG-5c9a2b3e-8f1d-5a7e-9b3c-2d4e6f8a1b2c,MIG-0a1b2c3d-4e5f-5a6b-8c7d-9e0f1a2b3c4d");
    }

    @Test
    void aTaskWithoutGpusSeesNone() {
        Map<String, String> env = assignment(List.of(), 0, 1).environment(dir);
        assertThat(env).containsEntry("CUDA_VISIBLE_DEVICES", "").containsEntry("NVIDIA_VISIBLE_DEVICES", "void");
    }

    @Test
    void theExitCodeAndTheLastLinesOfTheLogComeBack() throws Exception {
        TaskProcess p = TaskProcess.start(spec("for i in $(seq 1 100); do echo line $i; done; echo oops >&2; exit 3", Map.of()));
        assertThat(p.exit().get(10, TimeUnit.SECONDS)).isEqualTo(3);
        assertThat(p.logTail(3, 8000)).isEqualTo("line 99\nline 100\noops"); // stderr in the same log
        assertThat(p.logTail(1000, 20)).hasSizeLessThanOrEqualTo(20).endsWith("line 100\noops");
    }

    @Test
    void theTaskLeadsItsOwnProcessGroup() throws Exception {
        TaskProcess p = TaskProcess.start(spec("sleep 30", Map.of()));
        try {
            String stat = Files.readString(Path.of("/proc", String.valueOf(p.pid()), "stat"));
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            assertThat(Long.parseLong(fields[2])).as("pgrp").isEqualTo(p.pid()); // state, ppid, pgrp
        } finally {
            p.stop(Duration.ZERO);
        }
    }

    @Test
    void stopSendsSigtermToTheGroupAndATaskThatHonoursItCheckpointsAndExits() throws Exception {
        // the task and a child of it; on TERM the task writes its checkpoint and exits 0
        TaskProcess p = TaskProcess.start(spec("sleep 300 & echo $! > child.pid; trap 'echo checkpointed; exit 0' TERM; "
                + "echo ready; while true; do sleep 0.1; done", Map.of()));
        awaitLog("ready");
        long child = Long.parseLong(Files.readString(dir.resolve("work/child.pid")).strip());
        long started = System.nanoTime();
        assertThat(p.stop(Duration.ofSeconds(20))).isZero();
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10)); // not the whole grace
        assertThat(Files.readString(dir.resolve("logs/task.log"))).contains("checkpointed");
        awaitGone(child); // the child got the group's signal too
    }

    @Test
    void aTaskThatIgnoresSigtermIsKilledWithItsGroupAfterTheGrace() throws Exception {
        TaskProcess p = TaskProcess.start(spec("trap '' TERM; sh -c 'trap \"\" TERM; sleep 300' & echo $! > child.pid; echo ready; "
                + "while true; do sleep 0.1; done", Map.of()));
        awaitLog("ready");
        long child = Long.parseLong(Files.readString(dir.resolve("work/child.pid")).strip());
        long started = System.nanoTime();
        int code = p.stop(Duration.ofMillis(1500));
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        assertThat(code).as("killed by SIGKILL: 128 + 9").isEqualTo(137);
        assertThat(took).isBetween(Duration.ofMillis(1400), Duration.ofSeconds(10));
        awaitGone(child);
    }

    @Test
    void theWrapperWritesTheTasksExitStatusForAnAgentThatWasNotThere() throws Exception {
        TaskProcess p = TaskProcess.start(spec("echo working; exit 7", Map.of()), dir.resolve("state/task.exit"));
        assertThat(p.exit().get(10, TimeUnit.SECONDS)).isEqualTo(7);
        assertThat(Files.readString(dir.resolve("state/task.exit")).strip()).isEqualTo("7");
        assertThat(Files.readString(dir.resolve("logs/task.log"))).isEqualTo("working\n"); // the wrapper itself prints nothing
    }

    @Test
    void anAdoptedTaskIsFollowedToItsExitStatusAndStoppedThroughItsGroup() throws Exception {
        TaskProcess started = TaskProcess.start(spec("echo ready; while [ ! -f go ]; do sleep 0.05; done; exit 4", Map.of()));
        awaitLog("ready");
        // another agent process takes it over by pid and start time
        TaskProcess adopted = TaskProcess.adopt(started.pid(), started.startTicks(), dir.resolve("logs/task.log"), started.exitFile());
        assertThat(adopted.alive()).isTrue();
        assertThat(adopted.exit()).isNotDone();
        Files.writeString(dir.resolve("work/go"), "");
        assertThat(adopted.exit().get(10, TimeUnit.SECONDS)).isEqualTo(4);

        TaskProcess sleeper = TaskProcess.start(spec("trap 'echo saving; exit 0' TERM; echo ready2; while true; do sleep 0.05; done", Map.of()),
                dir.resolve("state/sleeper.exit"));
        awaitLog("ready2");
        TaskProcess again = TaskProcess.adopt(sleeper.pid(), sleeper.startTicks(), dir.resolve("logs/task.log"), sleeper.exitFile());
        assertThat(again.stop(Duration.ofSeconds(10))).isZero();
        assertThat(Files.readString(dir.resolve("logs/task.log"))).contains("saving");
    }

    @Test
    void anAdoptedTaskThatVanishedWithoutAnExitStatusIsLostAndAReusedPidIsNotTaken() throws Exception {
        TaskProcess p = TaskProcess.start(spec("echo ready; sleep 300", Map.of()));
        awaitLog("ready");
        TaskProcess adopted = TaskProcess.adopt(p.pid(), p.startTicks(), dir.resolve("logs/task.log"), p.exitFile());
        TaskProcess.signalGroup(p.pid(), "KILL"); // the wrapper dies with its task: no exit file
        assertThat(adopted.exit().get(10, TimeUnit.SECONDS)).isNull();
        // a live pid with another start time is some other process
        TaskProcess other = TaskProcess.start(spec("echo ready3; sleep 300", Map.of()), dir.resolve("state/other.exit"));
        try {
            awaitLog("ready3");
            TaskProcess wrong = TaskProcess.adopt(other.pid(), other.startTicks() - 1, dir.resolve("logs/task.log"), other.exitFile());
            assertThat(wrong.alive()).isFalse();
            assertThat(wrong.exit().get(5, TimeUnit.SECONDS)).isNull();
        } finally {
            other.stop(Duration.ZERO);
        }
    }

    private void awaitLog(String text) throws Exception {
        Path log = dir.resolve("logs/task.log");
        for (int i = 0; i < 100; i++) {
            if (Files.exists(log) && Files.readString(log).contains(text)) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("the task never logged " + text);
    }

    /** The process is gone (or a zombie waiting for its reparented parent to reap it). */
    private static void awaitGone(long pid) throws Exception {
        Path stat = Path.of("/proc", String.valueOf(pid), "stat");
        for (int i = 0; i < 100; i++) {
            if (!Files.exists(stat) || Files.readString(stat).contains(") Z ")) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("process " + pid + " still runs");
    }
}
