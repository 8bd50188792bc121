package dev.gantry.admission.rest;

import dev.gantry.admission.domain.JobSpec;
import dev.gantry.admission.domain.TaskGroupSpec;
import dev.gantry.contracts.jobs.JobQueued.Network;
import dev.gantry.contracts.jobs.JobQueued.Toleration;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotEmpty;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.PositiveOrZero;
import jakarta.validation.constraints.Size;
import java.util.List;
import java.util.Map;

/**
 * The JSON body of {@code POST /v1/jobs}: the pending job of the scenario format plus queue, team,
 * priority class, labels, and image and command per task group; a task group's {@code migProfile} asks for
 * {@code gpusPerReplica} MIG devices of that profile per replica. Field limits follow FORMAT.md;
 * omitted fields take its defaults (preemptible, not checkpointable, not migratable, any topology).
 */
public record JobSubmission(
        @NotBlank @Size(max = 253) String name,
        @NotBlank @Size(max = 253) String queue,
        @Size(max = 253) String team,
        @Size(max = 253) String priorityClassName,
        Integer priority,
        @Min(1) Integer minAvailable,
        @NotEmpty @Size(max = 100) List<@Valid @NotNull TaskGroup> taskGroups,
        List<@NotBlank String> gpuModels,
        String gpuTopology,
        Network network,
        Boolean requireInfiniBand,
        Map<String, String> nodeSelector,
        List<Toleration> tolerations,
        Boolean preemptible,
        Boolean checkpointable,
        @PositiveOrZero Integer checkpointGraceSeconds,
        @Min(1) Long estimatedRuntimeSeconds,
        Map<String, String> labels,
        Boolean migratable) {

    public record TaskGroup(
            @NotBlank @Size(max = 253) String name,
            @Min(1) @Max(10_000) int replicas,
            @Min(0) @Max(64) int gpusPerReplica,
            @Min(1) @Max(999) Integer gpuMilli,
            @PositiveOrZero long cpuMillis,
            @PositiveOrZero long memoryMiB,
            @Size(max = 1024) String image,
            List<String> command,
            String workingDir,
            Map<String, String> env,
            @Size(max = 64) String migProfile) {
    }

    public JobSpec toSpec() {
        return new JobSpec(name, queue, team, priorityClassName, priority == null ? 0 : priority, minAvailable,
                taskGroups.stream()
                        .map(g -> new TaskGroupSpec(g.name(), g.replicas(), g.gpusPerReplica(), g.gpuMilli(), g.cpuMillis(),
                                g.memoryMiB(), g.image(), g.command() == null ? List.of() : g.command(), g.workingDir(), g.env(),
                                blankToNull(g.migProfile())))
                        .toList(),
                gpuModels, gpuTopology, network, Boolean.TRUE.equals(requireInfiniBand), nodeSelector, tolerations,
                preemptible == null || preemptible, Boolean.TRUE.equals(checkpointable), checkpointGraceSeconds,
                estimatedRuntimeSeconds, labels, Boolean.TRUE.equals(migratable));
    }

    private static String blankToNull(String text) {
        return text == null || text.isEmpty() ? null : text;
    }
}
