package dev.gantry.placement.engine.packing;

import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.Scenario;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * GPUs each queue holds (milli-GPUs, children counted toward parents), before the plan and as
 * the plan grows; capability is broken only when a queue ends above both its capability and what
 * it held before (FORMAT.md rule 6, as the checker reads it).
 */
public final class QueueLedger {
    private final Map<String, Queue> queues = new HashMap<>();
    private final Map<String, List<String>> chains = new HashMap<>();
    private final Map<String, Long> before = new HashMap<>();
    private final Map<String, Long> after = new HashMap<>();

    public QueueLedger(Scenario sc) {
        sc.queues().forEach(q -> queues.put(q.name(), q));
        for (Queue q : sc.queues()) {
            List<String> chain = new ArrayList<>();
            for (Queue cur = q; cur != null && !chain.contains(cur.name()); cur = cur.parent() == null ? null : queues.get(cur.parent())) {
                chain.add(cur.name());
            }
            chains.put(q.name(), List.copyOf(chain));
        }
        for (RunningJob j : sc.running()) {
            for (String q : chain(j.queue())) {
                before.merge(q, j.gpuMilli(), Long::sum);
                after.merge(q, j.gpuMilli(), Long::sum);
            }
        }
    }

    private QueueLedger(QueueLedger o) {
        queues.putAll(o.queues);
        chains.putAll(o.chains);
        before.putAll(o.before);
        after.putAll(o.after);
    }

    public QueueLedger copy() {
        return new QueueLedger(this);
    }

    /** The queue and its ancestors. */
    public List<String> chain(String queue) {
        return chains.getOrDefault(queue, List.of(queue));
    }

    public Queue queue(String name) {
        return queues.get(name);
    }

    /** The first queue of the chain whose capability {@code milli} more GPUs would break, or null. */
    public String blockedBy(String queue, long milli) {
        for (String q : chain(queue)) {
            Integer cap = queues.get(q).capabilityGpus();
            long a = after.getOrDefault(q, 0L) + milli;
            if (cap != null && a > cap * 1000L && a > before.getOrDefault(q, 0L)) {
                return q;
            }
        }
        return null;
    }

    /** How many milli-GPUs the queue chain still admits. */
    public long headroom(String queue) {
        long room = Long.MAX_VALUE;
        for (String q : chain(queue)) {
            Integer cap = queues.get(q).capabilityGpus();
            if (cap != null) {
                room = Math.min(room, Math.max(cap * 1000L, before.getOrDefault(q, 0L)) - after.getOrDefault(q, 0L));
            }
        }
        return room;
    }

    public void add(String queue, long milli) {
        for (String q : chain(queue)) {
            after.merge(q, milli, Long::sum);
        }
    }

    public long before(String queue) {
        return before.getOrDefault(queue, 0L);
    }

    public long after(String queue) {
        return after.getOrDefault(queue, 0L);
    }
}
