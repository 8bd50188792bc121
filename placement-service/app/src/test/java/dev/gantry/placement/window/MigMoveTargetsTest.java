package dev.gantry.placement.window;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.domain.Migration;
import dev.gantry.placement.engine.domain.TaskPlacement;
import dev.gantry.placement.persistence.Allocation;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A move of a job on MIG devices, as the binder stores and checks it: the targets keep the devices and their
 * profile ({@code running_job.migration_targets}; targets stored before MIG moves read as whole GPUs), and a move
 * that would change what a task holds (MIG devices for whole GPUs, or another number of devices) is refused.
 */
class MigMoveTargetsTest {

    private static final UUID JOB = UUID.randomUUID();

    private static Allocation onMig(String task, String node, String... devices) {
        Allocation a = new Allocation();
        a.jobId = JOB;
        a.task = task;
        a.node = node;
        a.gpuIndices = new int[0];
        a.migProfile = "1g.10gb";
        a.migDevices = devices;
        return a;
    }

    @Test
    void aMigTargetKeepsItsDevicesAndProfileThroughTheColumnAndHoldsThem() {
        String json = MoveTargets.toJson(List.of(new MoveTargets.Target("nb-0", "n2", List.of(), null, 500, 1024, "1g.10gb",
                List.of("MIG-x"))));
        MoveTargets.Target read = MoveTargets.of(json).getFirst();
        assertThat(read.migProfile()).isEqualTo("1g.10gb");
        assertThat(read.migDevices()).containsExactly("MIG-x");
        Allocation held = MoveTargets.hold(JOB, read);
        assertThat(held.migDevices).containsExactly("MIG-x");
        assertThat(held.migProfile).isEqualTo("1g.10gb");
        assertThat(held.gpuIndices).isEmpty();
        // held: a placement on that device conflicts with it
        assertThat(PlanRecorder.conflict(new dev.gantry.placement.engine.domain.Placement("other",
                List.of(new TaskPlacement("w-0", "n2", List.of(), null, List.of("MIG-x")))), List.of(held)))
                .isEqualTo("MIG device MIG-x on n2 is held by job " + JOB);
    }

    @Test
    void targetsStoredBeforeMigMovesReadAsWholeGpus() {
        MoveTargets.Target old = MoveTargets.of("""
                [{"task": "w-0", "node": "n1", "gpus": [2, 3], "gpuMilli": null, "cpuMillis": 1000, "memoryMiB": 2048}]""").getFirst();
        assertThat(old.gpus()).containsExactly(2, 3);
        assertThat(old.migDevices()).isEmpty();
        assertThat(old.migProfile()).isNull();
        assertThat(MoveTargets.hold(JOB, old).migDevices).isEmpty();
    }

    @Test
    void aMoveThatChangesWhatATaskHoldsIsRefusedSayingSo() {
        List<Allocation> held = List.of(onMig("nb-0", "n1", "MIG-a"));
        Migration same = new Migration(JOB.toString(), List.of(new TaskPlacement("nb-0", "n2", List.of(), null, List.of("MIG-y"))));
        assertThat(MigrationRecorder.shapeChange(JOB, same, held)).isNull();
        Migration toGpu = new Migration(JOB.toString(), List.of(new TaskPlacement("nb-0", "n2", List.of(0), null, List.of())));
        assertThat(MigrationRecorder.shapeChange(JOB, toGpu, held))
                .isEqualTo("would move task nb-0 from 1 MIG devices 1g.10gb to 1 GPUs");
        Migration twice = new Migration(JOB.toString(), List.of(new TaskPlacement("nb-0", "n2", List.of(), null, List.of("MIG-y", "MIG-z"))));
        assertThat(MigrationRecorder.shapeChange(JOB, twice, held))
                .isEqualTo("would move task nb-0 from 1 MIG devices 1g.10gb to 2 MIG devices 1g.10gb");
    }
}
