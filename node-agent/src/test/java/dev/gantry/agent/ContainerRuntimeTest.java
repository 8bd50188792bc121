package dev.gantry.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command lines the agent builds for a container runtime. None of podman, docker or apptainer
 * is installed where these tests run, so they check the command line only: no container starts.
 */
class ContainerRuntimeTest {

    @TempDir
    Path dir;

    private static Assignment task(List<Integer> gpus) {
        return new Assignment(UUID.fromString("7b0c4f8e-5a8d-4a43-9d3e-0f6f1c2b3a4d"), "train", 1733500000000L, "worker-1", "worker",
                List.of("python3", "train.py", "--epochs", "90"), gpus, null, 0, 0, 1, 2, 0, 1, 1, 2, "10.0.0.5", 23456, true, 30, false, 0,
                null, null, "pytorch/pytorch:2.4.0", "/workspace", Map.of("EPOCHS", "90"));
    }

    private static final Map<String, String> ENV = Map.of("EPOCHS", "90", "RANK", "1", "CUDA_VISIBLE_DEVICES", "2,5");

    @Test
    void dockerRunsTheImageOnExactlyTheTasksGpusWithItsEnvironmentByNameAndItsDirectoriesMounted() {
        List<String> argv = ContainerRuntime.of(ContainerRuntime.Kind.DOCKER, "/usr/bin/docker")
                .command(task(List.of(2, 5)), ENV, Path.of("/workspace"), Path.of("/ckpt/job"));
        assertThat(argv).containsExactly("/usr/bin/docker", "run", "--rm", "--init", "--name",
                "gantry-7b0c4f8e-5a8d-4a43-9d3e-0f6f1c2b3a4d-1733500000000-worker-1", "--network", "host", "--ipc", "host",
                "--stop-timeout", "30", "--gpus", "\"device=2,5\"", "-e", "CUDA_VISIBLE_DEVICES", "-e", "EPOCHS", "-e", "RANK",
                "-v", "/ckpt/job:/ckpt/job", "-v", "/workspace:/workspace", "-w", "/workspace", "pytorch/pytorch:2.4.0",
                "python3", "train.py", "--epochs", "90");
        assertThat(String.join(" ", argv)).doesNotContain("=90"); // values stay out of the process list
        assertThat(ContainerRuntime.of(ContainerRuntime.Kind.DOCKER, "/usr/bin/docker").cleanup(task(List.of(2, 5))))
                .containsExactly("/usr/bin/docker", "rm", "-f", "gantry-7b0c4f8e-5a8d-4a43-9d3e-0f6f1c2b3a4d-1733500000000-worker-1");
    }

    @Test
    void podmanNamesEachGpuAsACdiDeviceAndATaskWithoutGpusGetsNone() {
        List<String> argv = ContainerRuntime.of(ContainerRuntime.Kind.PODMAN, "podman")
                .command(task(List.of(2, 5)), ENV, Path.of("/workspace"), Path.of("/ckpt/job"));
        assertThat(String.join(" ", argv)).contains("--device nvidia.com/gpu=2 --device nvidia.com/gpu=5").doesNotContain("--gpus");
        List<String> cpuOnly = ContainerRuntime.of(ContainerRuntime.Kind.PODMAN, "podman")
                .command(task(List.of()), ENV, Path.of("/workspace"), Path.of("/ckpt/job"));
        assertThat(String.join(" ", cpuOnly)).doesNotContain("--device").doesNotContain("--gpus");
    }

    @Test
    void apptainerExecsTheImageWithTheDriverBoundAndTheHostsEnvironment() {
        List<String> argv = ContainerRuntime.of(ContainerRuntime.Kind.APPTAINER, "apptainer")
                .command(task(List.of(0)), ENV, Path.of("/workspace"), Path.of("/ckpt/job"));
        assertThat(argv).containsExactly("apptainer", "exec", "--nv", "--bind", "/ckpt/job,/workspace", "--pwd", "/workspace",
                "docker://pytorch/pytorch:2.4.0", "python3", "train.py", "--epochs", "90");
        assertThat(ContainerRuntime.imageUri("/images/train.sif")).isEqualTo("/images/train.sif");
        assertThat(ContainerRuntime.imageUri("oras://registry/x:1")).isEqualTo("oras://registry/x:1");
        assertThat(ContainerRuntime.of(ContainerRuntime.Kind.APPTAINER, "apptainer").cleanup(task(List.of(0)))).isNull();
    }

    @Test
    void aRuntimeIsUsedOnlyWhenConfiguredAndOnThePath() throws Exception {
        assertThat(ContainerRuntime.find("none", "/usr/bin")).isNull();
        assertThat(ContainerRuntime.find(null, "/usr/bin")).isNull();
        assertThat(ContainerRuntime.find("podman", dir.toString())).as("not installed: plain processes").isNull();
        Path fake = Files.createFile(dir.resolve("podman"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        ContainerRuntime found = ContainerRuntime.find("podman", "/nonexistent:" + dir);
        assertThat(found).isNotNull();
        assertThat(found.command(task(List.of()), Map.of(), Path.of("/w"), Path.of("/c")).getFirst()).isEqualTo(fake.toString());
        assertThatThrownBy(() -> ContainerRuntime.find("lxc", "/usr/bin")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--container-runtime");
    }
}
