package dev.gantry.admission.rest;

import dev.gantry.admission.domain.JobSpec;
import dev.gantry.admission.domain.TaskGroupSpec;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotEmpty;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.PositiveOrZero;
import jakarta.validation.constraints.Size;
import java.util.List;

/** The JSON body of {@code POST /v1/jobs}. Field limits follow the scenario format (FORMAT.md). */
public record JobSubmission(
        @NotBlank @Size(max = 253) String name,
        @NotBlank @Size(max = 253) String queue,
        int priority,
        @Min(1) Integer minAvailable,
        @NotEmpty @Size(max = 100) List<@Valid @NotNull TaskGroup> taskGroups) {

    public record TaskGroup(
            @NotBlank @Size(max = 253) String name,
            @Min(1) @Max(10_000) int replicas,
            @Min(0) @Max(64) int gpusPerReplica,
            @Min(1) @Max(999) Integer gpuMilli,
            @PositiveOrZero long cpuMillis,
            @PositiveOrZero long memoryMiB) {
    }

    public JobSpec toSpec() {
        return new JobSpec(name, queue, priority, minAvailable, taskGroups.stream()
                .map(g -> new TaskGroupSpec(g.name(), g.replicas(), g.gpusPerReplica(), g.gpuMilli(), g.cpuMillis(), g.memoryMiB()))
                .toList());
    }
}
