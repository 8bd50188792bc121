package dev.gantry.agent;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Runs a task in a container of its image when the agent is configured with a runtime
 * ({@code --container-runtime podman|docker|apptainer}) that is on the PATH; a plain process
 * otherwise. The container sees what a plain process would: exactly its GPUs, the same environment
 * (passed by name, {@code -e NAME}, so values never show in a process list), its checkpoint and
 * working directories mounted at the same paths, the host's network (the rendezvous at
 * {@code MASTER_ADDR:MASTER_PORT} works as without containers). SIGTERM to the task's group reaches
 * the runtime's client, which passes it on to the container ({@code docker run}/{@code podman run}
 * attached proxy signals; {@code apptainer exec} runs the command as its own child); after a SIGKILL
 * the container is removed by name ({@link #cleanup}).
 */
public final class ContainerRuntime {

    public enum Kind { PODMAN, DOCKER, APPTAINER }

    private final Kind kind;
    private final String executable;

    private ContainerRuntime(Kind kind, String executable) {
        this.kind = kind;
        this.executable = executable;
    }

    /**
     * The runtime {@code name} names, when it is on {@code path} (the agent's PATH); null for
     * {@code none}/null, or when it is not installed (then tasks run as plain processes).
     */
    public static ContainerRuntime find(String name, String path) {
        if (name == null || name.isBlank() || name.equalsIgnoreCase("none")) {
            return null;
        }
        Kind kind;
        try {
            kind = Kind.valueOf(name.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--container-runtime must be podman, docker, apptainer or none, not " + name);
        }
        String program = kind.name().toLowerCase(Locale.ROOT);
        for (String dir : (path == null ? "" : path).split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
                return new ContainerRuntime(kind, Path.of(dir, program).toString());
            }
        }
        return null;
    }

    /** For tests: a runtime at a given executable, installed or not. */
    static ContainerRuntime of(Kind kind, String executable) {
        return new ContainerRuntime(kind, executable);
    }

    public Kind kind() {
        return kind;
    }

    /** The container's name for a task: unique per job attempt and task, and valid for docker and podman. */
    static String containerName(Assignment a) {
        return ("gantry-" + a.jobId() + "-" + a.attempt() + "-" + a.task()).replaceAll("[^A-Za-z0-9_.-]", "-");
    }

    /** The command line that runs {@code a}'s command in its image, with {@code env}'s variables, in {@code workingDir}. */
    public List<String> command(Assignment a, Map<String, String> env, Path workingDir, Path checkpointDir) {
        List<String> argv = new ArrayList<>();
        String gpus = String.join(",", a.gpus().stream().map(String::valueOf).toList());
        switch (kind) {
            case DOCKER, PODMAN -> {
                argv.addAll(List.of(executable, "run", "--rm", "--init", "--name", containerName(a), "--network", "host", "--ipc", "host",
                        "--stop-timeout", String.valueOf(Math.max(1, a.grace(java.time.Duration.ofSeconds(10)).toSeconds()))));
                if (!a.gpus().isEmpty()) {
                    if (kind == Kind.DOCKER) {
                        argv.addAll(List.of("--gpus", "\"device=" + gpus + "\""));
                    } else {
                        a.gpus().forEach(g -> argv.addAll(List.of("--device", "nvidia.com/gpu=" + g))); // CDI
                    }
                }
                env.keySet().stream().sorted().forEach(name -> argv.addAll(List.of("-e", name)));
                argv.addAll(List.of("-v", checkpointDir + ":" + checkpointDir, "-v", workingDir + ":" + workingDir, "-w", workingDir.toString(),
                        a.image()));
            }
            case APPTAINER -> {
                // the host's environment passes through by default; --nv binds the driver, CUDA_VISIBLE_DEVICES picks the GPUs
                argv.addAll(List.of(executable, "exec"));
                if (!a.gpus().isEmpty()) {
                    argv.add("--nv");
                }
                argv.addAll(List.of("--bind", checkpointDir + "," + workingDir, "--pwd", workingDir.toString(), imageUri(a.image())));
            }
        }
        argv.addAll(a.command());
        return argv;
    }

    /** What removes the task's container once its client is gone (a SIGKILLed client leaves it running); null when nothing need be. */
    public List<String> cleanup(Assignment a) {
        return kind == Kind.APPTAINER ? null : List.of(executable, "rm", "-f", containerName(a));
    }

    /** A local image file (.sif, or a path) as it is; a registry reference as {@code docker://...}. */
    static String imageUri(String image) {
        return image.startsWith("/") || image.endsWith(".sif") || image.contains("://") ? image : "docker://" + image;
    }
}
