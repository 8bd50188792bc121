package dev.gantry.admission.console;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

/**
 * The cluster heat map: spine → leaf → node → NVLink island → GPU, each GPU split into slices by
 * the jobs on it ({@code gpuMilli} of 1000), each slice coloured by the job's queue; plus totals by
 * GPU model. Plain Java: built from what inventory, placement and admission answer.
 */
public record ClusterMap(List<Spine> spines, List<ModelTotal> totals, List<QueueKey> legend, int nodeCount) {

    /** What the console knows of a job holding GPUs; {@code name} null when the viewer may not see it. */
    public record JobRef(String name, String queue) {
    }

    /** {@code name} {@value #NO_SPINE} for nodes whose inventory names no spine. */
    public record Spine(String name, List<Leaf> leaves) {
        /** The heading: "Spine s1", or "No spine" (not "Spine no spine"). */
        public String title() {
            return NO_SPINE.equals(name) ? "No spine" : "Spine " + name;
        }

        /** For an HTML id: no spaces. */
        public String anchor() {
            return name.replaceAll("[^A-Za-z0-9_.-]", "-");
        }
    }

    /** {@code name} {@value #NO_LEAF} for nodes whose inventory names no leaf. */
    public record Leaf(String name, List<NodeCell> nodes) {
        public String title() {
            return NO_LEAF.equals(name) ? "No leaf" : "Leaf " + name;
        }
    }

    static final String NO_SPINE = "no spine";
    static final String NO_LEAF = "no leaf";

    /**
     * @param status  {@code ready}, {@code quarantined}, {@code cordoned}, {@code unschedulable}, {@code not-ready} or
     *                {@code unknown} (a CSS class)
     * @param statusText the same in words, shown next to the node so colour is never the only cue
     * @param reason  why placement quarantined the node, null when it did not
     */
    public record NodeCell(String name, String model, int gpus, String status, String statusText, List<Island> islands,
            String usedText, String reason, boolean simulated) {

        public boolean usable() {
            return status.equals("ready");
        }
    }

    /** GPUs joined by NVLink/NVSwitch ({@code nvlink}), or the node's PCIe-only GPUs. */
    public record Island(boolean nvlink, List<GpuCell> gpus) {
    }

    public record GpuCell(int index, List<Slice> slices, int freeMilli, String label) {

        public boolean idle() {
            return slices.isEmpty();
        }
    }

    /** A job's part of a GPU: {@code colour} indexes the legend. */
    public record Slice(UUID jobId, String jobName, String queue, int colour, int milli) {

        /** Width of the slice in percent of the GPU. */
        public int percent() {
            return Math.max(1, milli / 10);
        }
    }

    /** GPUs of one model: all of them, held by jobs, free on usable nodes, and on cordoned or NotReady nodes. */
    public record ModelTotal(String model, int gpus, String allocated, String free, int unavailable) {
    }

    public record QueueKey(String queue, int colour) {
    }

    /** Queue colours cycle through this many CSS classes (q0..q7). */
    static final int PALETTE = 8;
    private static final int WHOLE = 1000;

    public static ClusterMap of(List<InventoryClient.Node> nodes, List<PlacementClient.Allocation> allocations,
            Map<UUID, JobRef> jobs) {
        Map<String, Map<Integer, List<Slice>>> byNodeGpu = new TreeMap<>();
        Set<String> queues = new TreeSet<>();
        allocations.forEach(a -> queues.add(queueOf(jobs, a.jobId())));
        Map<String, Integer> colours = new LinkedHashMap<>();
        for (String q : queues) {
            colours.put(q, colours.size() % PALETTE);
        }
        for (PlacementClient.Allocation a : allocations) {
            JobRef job = jobs.get(a.jobId());
            String queue = queueOf(jobs, a.jobId());
            int milli = a.gpuMilli() == null ? WHOLE : a.gpuMilli();
            for (int gpu : a.gpus() == null ? List.<Integer>of() : a.gpus()) {
                List<Slice> slices = byNodeGpu.computeIfAbsent(a.node(), n -> new TreeMap<>()).computeIfAbsent(gpu, g -> new ArrayList<>());
                // several tasks of one job on one GPU are one slice
                int existing = indexOf(slices, a.jobId());
                if (existing >= 0) {
                    Slice s = slices.get(existing);
                    slices.set(existing, new Slice(s.jobId(), s.jobName(), s.queue(), s.colour(), Math.min(WHOLE, s.milli() + milli)));
                } else {
                    slices.add(new Slice(a.jobId(), job == null ? null : job.name(), queue, colours.get(queue), milli));
                }
            }
        }

        Map<String, Map<String, List<NodeCell>>> tree = new TreeMap<>();
        Map<String, long[]> totals = new TreeMap<>(); // model -> gpus, allocated milli, free milli, unavailable
        for (InventoryClient.Node node : nodes.stream().sorted(Comparator.comparing(InventoryClient.Node::name)).toList()) {
            Map<Integer, List<Slice>> used = byNodeGpu.getOrDefault(node.name(), Map.of());
            NodeCell cell = cell(node, used);
            String spine = node.topology() == null || node.topology().spine() == null ? NO_SPINE : node.topology().spine();
            String leaf = node.topology() == null || node.topology().leaf() == null ? NO_LEAF : node.topology().leaf();
            tree.computeIfAbsent(spine, s -> new TreeMap<>()).computeIfAbsent(leaf, l -> new ArrayList<>()).add(cell);
            long[] t = totals.computeIfAbsent(model(node), m -> new long[4]);
            t[0] += node.gpus();
            for (int gpu = 0; gpu < node.gpus(); gpu++) {
                int held = used.getOrDefault(gpu, List.of()).stream().mapToInt(Slice::milli).sum();
                t[1] += held;
                if (cell.usable()) {
                    t[2] += Math.max(0, WHOLE - held);
                } else {
                    t[3]++;
                }
            }
        }
        List<Spine> spines = tree.entrySet().stream()
                .map(s -> new Spine(s.getKey(), s.getValue().entrySet().stream().map(l -> new Leaf(l.getKey(), l.getValue())).toList()))
                .toList();
        List<ModelTotal> modelTotals = totals.entrySet().stream()
                .map(e -> new ModelTotal(e.getKey(), (int) e.getValue()[0], gpus(e.getValue()[1]), gpus(e.getValue()[2]), (int) e.getValue()[3]))
                .toList();
        List<QueueKey> legend = colours.entrySet().stream().map(e -> new QueueKey(e.getKey(), e.getValue())).toList();
        return new ClusterMap(spines, modelTotals, legend, nodes.size());
    }

    private static NodeCell cell(InventoryClient.Node node, Map<Integer, List<Slice>> used) {
        List<Island> islands = new ArrayList<>();
        Set<Integer> inIsland = new HashSet<>();
        for (List<Integer> island : node.nvlinkIslands() == null ? List.<List<Integer>>of() : node.nvlinkIslands()) {
            List<GpuCell> gpus = island.stream().sorted().filter(g -> g < node.gpus()).map(g -> gpu(g, used)).toList();
            inIsland.addAll(island);
            if (!gpus.isEmpty()) {
                islands.add(new Island(true, gpus));
            }
        }
        List<GpuCell> pcie = new ArrayList<>();
        for (int g = 0; g < node.gpus(); g++) {
            if (!inIsland.contains(g)) {
                pcie.add(gpu(g, used));
            }
        }
        if (!pcie.isEmpty()) {
            islands.add(new Island(false, pcie));
        }
        String status;
        String text;
        if (node.quarantine() != null) { // first: new work avoids it whatever its health, and the reason needs an operator
            status = "quarantined";
            text = "QUARANTINED";
        } else if ("NOT_READY".equals(node.health())) {
            status = "not-ready";
            text = "NotReady";
        } else if (node.health() != null && !"READY".equals(node.health())) {
            status = "unknown";
            text = "health unknown";
        } else if (node.cordoned()) {
            status = "cordoned";
            text = "cordoned";
        } else if (!node.schedulable()) {
            status = "unschedulable";
            text = "unschedulable";
        } else {
            status = "ready";
            text = "Ready";
        }
        long held = used.values().stream().flatMap(List::stream).mapToLong(Slice::milli).sum();
        return new NodeCell(node.name(), model(node), node.gpus(), status, text, islands,
                gpus(held) + " of " + node.gpus() + " GPUs in use",
                node.quarantine() == null ? null : "quarantined by placement since " + node.quarantine().since() + ": " + node.quarantine().reason(),
                node.simulated());
    }

    private static GpuCell gpu(int index, Map<Integer, List<Slice>> used) {
        List<Slice> slices = used.getOrDefault(index, List.of());
        int held = slices.stream().mapToInt(Slice::milli).sum();
        String label = "GPU " + index + ": " + (slices.isEmpty() ? "idle" : String.join(", ", slices.stream()
                .map(s -> (s.jobName() == null ? "a job" : s.jobName()) + " (" + s.queue() + (s.milli() < WHOLE ? ", " + s.milli() + "m" : "") + ")")
                .toList()));
        return new GpuCell(index, slices, Math.max(0, WHOLE - held), label);
    }

    private static int indexOf(List<Slice> slices, UUID jobId) {
        for (int i = 0; i < slices.size(); i++) {
            if (slices.get(i).jobId().equals(jobId)) {
                return i;
            }
        }
        return -1;
    }

    private static String queueOf(Map<UUID, JobRef> jobs, UUID jobId) {
        JobRef job = jobs.get(jobId);
        return job == null || job.queue() == null ? "unknown" : job.queue();
    }

    private static String model(InventoryClient.Node node) {
        return node.gpuModel() == null || node.gpuModel().isBlank() ? "unknown model" : node.gpuModel();
    }

    /** Milli-GPUs as GPUs: "3", "2.5". */
    static String gpus(long milli) {
        return milli % WHOLE == 0 ? String.valueOf(milli / WHOLE)
                : String.format(Locale.ROOT, "%.3f", milli / (double) WHOLE).replaceAll("0+$", "");
    }
}
