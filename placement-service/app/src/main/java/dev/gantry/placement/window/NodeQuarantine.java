package dev.gantry.placement.window;

import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.json.Violation;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jboss.logging.Logger;

/**
 * Keeps one inconsistent node from stalling the cluster. When the engine refuses a window's
 * scenario because of a node (a node shrunk below what is allocated on it, more CPU in use than it
 * has) or a running job on it (a GPU index out of range, a GPU held twice), that node is
 * quarantined: it leaves the window, with every job holding GPUs on it (those keep running where
 * they are, untouched) and every other node such a job also holds; all other nodes go on being
 * scheduled. Each window finds the set again, so a node leaves quarantine as soon as it is
 * consistent. The reasons are served by {@code GET /v1/quarantined-nodes} and counted by
 * {@code gantry_placement_quarantined_nodes}.
 */
@ApplicationScoped
public class NodeQuarantine {

    private static final Logger LOG = Logger.getLogger(NodeQuarantine.class);
    private static final Pattern NODE = Pattern.compile("^nodes\\[(\\d+)]");
    private static final Pattern RUNNING = Pattern.compile("^running\\[(\\d+)](?:\\.tasks\\[(\\d+)])?");

    /** A quarantined node: why, and since when. */
    public record Entry(String node, String reason, Instant since) {
    }

    /** The window's state without the quarantined nodes, and the nodes with why. */
    record Result(WindowLoop.State state, Map<String, String> reasons) {
    }

    private final Map<String, Entry> quarantined = new ConcurrentHashMap<>();

    public NodeQuarantine(MeterRegistry registry) {
        Gauge.builder("gantry.placement.quarantined.nodes", quarantined, Map::size)
                .description("nodes left out of scheduling because their state is inconsistent").register(registry);
    }

    /** Whether any node is quarantined now. */
    public boolean any() {
        return !quarantined.isEmpty();
    }

    /** The nodes quarantined by the last window, oldest first. */
    public List<Entry> current() {
        return quarantined.values().stream().sorted(Comparator.comparing(Entry::since).thenComparing(Entry::node)).toList();
    }

    /** What the last window found: these nodes (possibly none) are quarantined now, the others no longer. */
    void update(Map<String, String> reasons, Instant now) {
        quarantined.keySet().removeIf(node -> {
            boolean released = !reasons.containsKey(node);
            if (released) {
                LOG.infof("node %s is consistent again and back in scheduling", node);
            }
            return released;
        });
        reasons.forEach((node, reason) -> quarantined.compute(node, (n, old) -> {
            if (old == null) {
                LOG.errorf("node %s quarantined: %s; the other nodes go on being scheduled", node, reason);
                return new Entry(node, reason, now);
            }
            return new Entry(node, reason, old.since());
        }));
    }

    /**
     * The nodes the violations are about, with why; empty when one of them is about something no
     * node can be blamed for (a queue, a duplicate name), so the window cannot go on without it.
     * Violations about pending jobs are handled by the caller and must not be passed.
     */
    static Optional<Map<String, String>> blame(Scenario scenario, List<Violation> violations) {
        Map<String, String> reasons = new LinkedHashMap<>();
        Set<String> known = new HashSet<>();
        scenario.nodes().forEach(n -> known.add(n.name()));
        for (Violation v : violations) {
            Matcher node = NODE.matcher(v.field());
            if (node.find()) {
                reasons.putIfAbsent(scenario.nodes().get(Integer.parseInt(node.group(1))).name(), v.message());
                continue;
            }
            Matcher running = RUNNING.matcher(v.field());
            if (!running.find()) {
                return Optional.empty();
            }
            RunningJob job = scenario.running().get(Integer.parseInt(running.group(1)));
            List<RunningTask> tasks = running.group(2) != null ? List.of(job.tasks().get(Integer.parseInt(running.group(2)))) : job.tasks();
            boolean blamed = false;
            for (RunningTask task : tasks) {
                if (known.contains(task.node())) {
                    reasons.putIfAbsent(task.node(), "running job " + job.name() + ": " + v.message());
                    blamed = true;
                }
            }
            if (!blamed) {
                return Optional.empty(); // a job on no node we know: nothing to set aside
            }
        }
        return Optional.of(reasons);
    }

    /** Leaves out the blamed nodes, every job holding GPUs on one of them, and the other nodes such jobs hold. */
    static Result without(WindowLoop.State state, Map<String, String> blamed) {
        Map<String, String> reasons = new LinkedHashMap<>(blamed);
        Set<UUID> jobs = new HashSet<>();
        boolean grew = true;
        while (grew) { // a job spanning a quarantined node pins its other nodes too (its GPUs there stay held)
            grew = false;
            for (ScenarioBuilder.Held row : state.held()) {
                if (reasons.containsKey(row.node()) && jobs.add(row.jobId())) {
                    grew = true;
                }
            }
            for (ScenarioBuilder.Held row : state.held()) {
                if (jobs.contains(row.jobId()) && !reasons.containsKey(row.node())) {
                    reasons.put(row.node(), "holds job " + row.jobId() + ", which also runs on a quarantined node");
                    grew = true;
                }
            }
        }
        List<NodeInfo> nodes = state.nodes().stream().filter(n -> !reasons.containsKey(n.name())).toList();
        List<ScenarioBuilder.Held> held = state.held().stream().filter(h -> !jobs.contains(h.jobId())).toList();
        List<ScenarioBuilder.Placed> placed = state.placed().stream().filter(p -> !jobs.contains(p.jobId())).toList();
        return new Result(new WindowLoop.State(nodes, placed, held, state.waiting(), state.shares()), reasons);
    }
}
