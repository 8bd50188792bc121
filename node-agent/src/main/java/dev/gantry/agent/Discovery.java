package dev.gantry.agent;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What this host has: its GPUs from {@code nvidia-smi} (model, count, memory, the MIG devices of GPUs in MIG
 * mode from {@code nvidia-smi -L}, and the text of
 * {@code nvidia-smi topo -m}, which the inventory parses into NVLink islands and NUMA groups), or
 * declared simulated GPUs; CPU and memory from the OS.
 */
public final class Discovery {

    /** One GPU as {@code nvidia-smi --query-gpu=index,uuid,name,memory.total --format=csv} lists it. */
    public record Gpu(int index, String uuid, String name, long memoryMiB) {
    }

    /** One MIG device as {@code nvidia-smi -L} lists it: the GPU it is carved from, its profile and UUID. */
    public record MigDevice(int gpu, String profile, String uuid) {
    }

    /** The node as the agent describes it to the inventory ({@code PUT /v1/nodes/{name}}). */
    public record Host(String gpuModel, int gpus, long gpuMemoryMiB, String topoMatrix, long cpuMillis, long memoryMiB,
            boolean simulated, List<MigDevice> migDevices) {

        public Host {
            migDevices = migDevices == null ? List.of() : List.copyOf(migDevices);
        }

        public Host(String gpuModel, int gpus, long gpuMemoryMiB, String topoMatrix, long cpuMillis, long memoryMiB, boolean simulated) {
            this(gpuModel, gpus, gpuMemoryMiB, topoMatrix, cpuMillis, memoryMiB, simulated, List.of());
        }

        public Map<String, Object> toNodeSpec(Map<String, String> labels) {
            Map<String, Object> spec = new LinkedHashMap<>();
            spec.put("gpuModel", gpuModel);
            spec.put("gpus", gpus);
            spec.put("gpuMemoryMiB", gpuMemoryMiB);
            if (topoMatrix != null) {
                spec.remove("gpus"); // the matrix says how many; the inventory checks they agree
                spec.put("topoMatrix", topoMatrix);
            }
            spec.put("cpuMillis", cpuMillis);
            spec.put("memoryMiB", memoryMiB);
            spec.put("labels", labels);
            spec.put("simulated", simulated);
            if (!migDevices.isEmpty()) {
                // the inventory counts them per profile; the UUID is what a task on the device is started with
                spec.put("mig", Map.of("strategy", "mixed", "devices", migDevices.stream()
                        .map(d -> Map.<String, Object>of("id", d.uuid(), "gpu", d.gpu(), "profile", d.profile())).toList()));
            }
            return spec;
        }
    }

    private static final java.util.regex.Pattern GPU_LINE = java.util.regex.Pattern.compile("^GPU\\s+(\\d+):");
    private static final java.util.regex.Pattern MIG_LINE =
            java.util.regex.Pattern.compile("^\\s+MIG\\s+(\\S+)\\s+Device\\s+\\d+:\\s+\\(UUID:\\s*(MIG-[^)\\s]+)\\)");

    /**
     * The MIG devices in the text of {@code nvidia-smi -L}: each {@code MIG <profile> Device <n>: (UUID: MIG-…)} line
     * under the {@code GPU <index>: …} line of the GPU it is carved from. Empty when no GPU is in MIG mode.
     */
    public static List<MigDevice> parseMigDevices(String listing) {
        List<MigDevice> out = new ArrayList<>();
        int gpu = -1;
        for (String line : listing.split("\\R")) {
            java.util.regex.Matcher g = GPU_LINE.matcher(line);
            if (g.find()) {
                gpu = Integer.parseInt(g.group(1));
                continue;
            }
            java.util.regex.Matcher m = MIG_LINE.matcher(line);
            if (m.find() && gpu >= 0) {
                out.add(new MigDevice(gpu, m.group(1), m.group(2)));
            }
        }
        return out;
    }

    private Discovery() {
    }

    /**
     * Parses the CSV of {@code nvidia-smi --query-gpu=index,uuid,name,memory.total --format=csv}
     * (a header line, then {@code 0, GPU-..., NVIDIA A100-SXM4-80GB, 81920 MiB}).
     */
    public static List<Gpu> parseGpus(String csv) {
        List<Gpu> gpus = new ArrayList<>();
        for (String line : csv.split("\\R")) {
            String trimmed = line.strip();
            if (trimmed.isEmpty() || trimmed.startsWith("index")) {
                continue;
            }
            String[] f = trimmed.split("\\s*,\\s*");
            if (f.length < 4) {
                throw new IllegalArgumentException("not an nvidia-smi GPU line: " + trimmed);
            }
            String memory = f[3].replaceAll("(?i)\\s*MiB$", "").strip();
            gpus.add(new Gpu(Integer.parseInt(f[0].strip()), f[1].strip(), f[2].strip(), Long.parseLong(memory)));
        }
        return gpus;
    }

    /** The GPU model as the inventory names models: the product name without the vendor, blanks as dashes. */
    public static String modelOf(String name) {
        return name.replaceFirst("(?i)^NVIDIA\\s+", "").strip().replaceAll("\\s+", "-");
    }

    /** CPU and memory a simulated node declares per GPU (a DGX A100: 128 cores and 1-2 TiB for 8 GPUs), unless the host has more. */
    static final long SIMULATED_CPU_MILLIS_PER_GPU = 16_000;
    static final long SIMULATED_MEMORY_MIB_PER_GPU = 128 * 1024;

    /**
     * {@code 8:A100} → eight simulated GPUs of model A100 (of 80 GiB unless a third part says, e.g. {@code 8:A100:40960}), on
     * a node as large as such GPUs come in: at least 16 cores and 128 GiB per GPU, so the jobs written for them fit (a
     * 2-core test machine would otherwise declare a node no 8-GPU job could use).
     */
    public static Host simulated(String spec, long cpuMillis, long memoryMiB) {
        String[] parts = spec.split(":");
        if (parts.length < 2 || parts.length > 3 || parts[1].isBlank()) {
            throw new IllegalArgumentException("--simulate wants N:MODEL (e.g. 8:A100), not " + spec);
        }
        int n;
        long mem = 81920;
        try {
            n = Integer.parseInt(parts[0]);
            if (parts.length == 3) {
                mem = Long.parseLong(parts[2]);
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--simulate wants N:MODEL (e.g. 8:A100), not " + spec);
        }
        if (n < 0 || n > 64) {
            throw new IllegalArgumentException("--simulate: 0..64 GPUs, not " + n);
        }
        return new Host(parts[1], n, mem, null, Math.max(cpuMillis, n * SIMULATED_CPU_MILLIS_PER_GPU),
                Math.max(memoryMiB, n * SIMULATED_MEMORY_MIB_PER_GPU), true);
    }

    /** This host: real GPUs when {@code nvidia-smi} answers, else {@code fallback} simulated ones. */
    public static Host discover(String fallbackSimulation) {
        long cpu = Runtime.getRuntime().availableProcessors() * 1000L;
        long memory = osMemoryMiB();
        List<Gpu> gpus = nvidiaSmiGpus();
        if (!gpus.isEmpty()) {
            String topo = run("nvidia-smi", "topo", "-m");
            String listing = run("nvidia-smi", "-L");
            List<MigDevice> migs = listing == null ? List.of() : parseMigDevices(listing);
            return new Host(modelOf(gpus.getFirst().name()), gpus.size(), gpus.getFirst().memoryMiB(), topo, cpu, memory, false, migs);
        }
        return simulated(fallbackSimulation, cpu, memory);
    }

    /** The GPUs {@code nvidia-smi} lists; none where it is missing or fails (no driver). */
    static List<Gpu> nvidiaSmiGpus() {
        String csv = run("nvidia-smi", "--query-gpu=index,uuid,name,memory.total", "--format=csv");
        return csv == null ? List.of() : parseGpus(csv);
    }

    /** The host's memory in MiB, as the OS reports it. */
    public static long osMemoryMiB() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getTotalMemorySize() / (1024 * 1024);
        }
        return 0;
    }

    /** A command's stdout, or null when it cannot run or fails. */
    static String run(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(20, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                return null;
            }
            return new String(out, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
