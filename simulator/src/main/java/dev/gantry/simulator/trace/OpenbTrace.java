package dev.gantry.simulator.trace;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Alibaba's OpenB pod list (the FGD paper's workload): one pod per row, no durations used. */
public final class OpenbTrace {

    /** A pod: whole GPUs ({@code gpuMilli} 1000) or a share of one; {@code gpuSpec} = allowed models (empty: any). */
    public record Pod(String name, long cpuMillis, long memoryMiB, int gpus, int gpuMilli, List<String> gpuSpec) {
        /** GPU demand in thousandths: what "arrived workload" counts. */
        public long demandMilli() {
            return (long) gpus * gpuMilli;
        }
    }

    private OpenbTrace() {
    }

    public static List<Pod> read(Path file) {
        Csv csv = Csv.read(file);
        csv.require("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli");
        List<Pod> pods = new ArrayList<>();
        for (int i = 0; i < csv.size(); i++) {
            int gpus = (int) csv.longOf(i, "num_gpu");
            int milli = (int) csv.longOf(i, "gpu_milli");
            if (gpus < 0 || gpus > 64 || milli < 0 || milli > 1000 || gpus > 1 && milli != 1000) {
                throw csv.error(i, "num_gpu", "unsupported shape " + gpus + " x " + milli + " milli");
            }
            String spec = csv.has("gpu_spec") ? csv.get(i, "gpu_spec") : "";
            List<String> models = spec.isEmpty() ? List.of() : Arrays.stream(spec.split("\\|")).map(String::trim).toList();
            pods.add(new Pod(csv.get(i, "name").toLowerCase(java.util.Locale.ROOT), csv.longOf(i, "cpu_milli"),
                    csv.longOf(i, "memory_mib"), gpus == 0 || milli == 0 ? 0 : gpus, gpus == 0 ? 0 : milli, models));
        }
        return pods;
    }
}
