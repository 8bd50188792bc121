package dev.gantry.placement.engine.packing;

import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.Scenario;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Each queue's deserved fair share of the cluster's GPUs (milli-GPUs), as reclaim toward the fair
 * share reads it: the schedulable GPUs are divided among the root queues with demand (running and
 * waiting work), and a parent's share among its children with demand, each first getting its
 * guarantee (as far as it has demand) and then the rest by weight, water-filling: no queue gets
 * more than its demand or its capability, and what one cannot use goes to the others.
 * <p>
 * A parent's own jobs take part among its children as one more member with the parent's weight;
 * the share reported for a queue is that of its own jobs (a parent without jobs reports 0), which
 * is what reclaim compares with the GPUs the queue's own jobs hold.
 */
public final class FairShares {
    private static final long UNBOUNDED = Long.MAX_VALUE / 4;

    private FairShares() {
    }

    /**
     * As {@link #milli(Scenario)}, for the queue trees that reclaim toward their fair share: the
     * queues under the given root queues keep their share, every other queue gets 0 (it is entitled
     * to its guarantee only). An empty set: every tree.
     */
    public static Map<String, Long> milli(Scenario sc, java.util.Set<String> trees) {
        Map<String, Long> all = milli(sc);
        if (trees.isEmpty()) {
            return all;
        }
        Map<String, Queue> byName = new HashMap<>();
        sc.queues().forEach(q -> byName.put(q.name(), q));
        Map<String, Long> out = new LinkedHashMap<>();
        all.forEach((queue, share) -> out.put(queue, trees.contains(root(queue, byName)) ? share : 0L));
        return out;
    }

    /** The root of the queue's tree (a cycle in parents ends at the queue where it closes). */
    static String root(String queue, Map<String, Queue> byName) {
        String at = queue;
        java.util.Set<String> seen = new java.util.HashSet<>();
        while (seen.add(at)) {
            Queue q = byName.get(at);
            if (q == null || q.parent() == null || !byName.containsKey(q.parent())) {
                return at;
            }
            at = q.parent();
        }
        return at;
    }

    /** Queue name -> fair share of its own jobs, milli-GPUs; every queue of the scenario has an entry. */
    public static Map<String, Long> milli(Scenario sc) {
        Map<String, Queue> byName = new LinkedHashMap<>();
        sc.queues().forEach(q -> byName.put(q.name(), q));
        Map<String, Long> own = new HashMap<>();
        for (RunningJob r : sc.running()) {
            own.merge(r.queue(), r.gpuMilli(), Long::sum);
        }
        for (PendingJob p : sc.pending()) {
            own.merge(p.queue(), p.gpuMilli(), Long::sum);
        }
        Map<String, List<Queue>> children = new HashMap<>();
        List<Queue> roots = new ArrayList<>();
        for (Queue q : sc.queues()) {
            if (q.parent() == null || !byName.containsKey(q.parent()) || q.parent().equals(q.name())) {
                roots.add(q);
            } else {
                children.computeIfAbsent(q.parent(), k -> new ArrayList<>()).add(q);
            }
        }
        Map<String, Long> subtree = new HashMap<>();
        for (Queue q : roots) {
            subtreeDemand(q, children, own, subtree, new ArrayList<>());
        }
        long capacity = sc.nodes().stream().filter(Node::schedulable).mapToLong(n -> 1000L * n.gpus()).sum();
        Map<String, Long> out = new LinkedHashMap<>();
        sc.queues().forEach(q -> out.put(q.name(), 0L));
        List<Member> top = new ArrayList<>();
        for (Queue q : roots) {
            top.add(Member.of(q, subtree.getOrDefault(q.name(), 0L)));
        }
        share(top, capacity, children, own, subtree, out);
        return out;
    }

    /** Own demand plus the children's, once per queue (a cycle in parents is cut). */
    private static long subtreeDemand(Queue q, Map<String, List<Queue>> children, Map<String, Long> own, Map<String, Long> subtree,
            List<String> path) {
        if (path.contains(q.name())) {
            return 0;
        }
        path.add(q.name());
        long sum = own.getOrDefault(q.name(), 0L);
        for (Queue c : children.getOrDefault(q.name(), List.of())) {
            sum += subtreeDemand(c, children, own, subtree, path);
        }
        path.removeLast();
        subtree.put(q.name(), sum);
        return sum;
    }

    /** One claimant of a share: a queue's subtree, or (queue == null) a parent's own jobs. */
    private record Member(Queue queue, String ownOf, double weight, long guarantee, long limit) {
        static Member of(Queue q, long subtreeDemand) {
            long cap = q.capabilityGpus() == null ? UNBOUNDED : q.capabilityGpus() * 1000L;
            return new Member(q, null, q.weight() > 0 ? q.weight() : 1, q.guaranteeGpus() * 1000L, Math.min(cap, subtreeDemand));
        }
    }

    private static void share(List<Member> members, long amount, Map<String, List<Queue>> children, Map<String, Long> own,
            Map<String, Long> subtree, Map<String, Long> out) {
        long[] given = divide(members, amount);
        for (int i = 0; i < members.size(); i++) {
            Member m = members.get(i);
            if (m.queue() == null) {
                out.put(m.ownOf(), given[i]);
                continue;
            }
            List<Queue> kids = children.getOrDefault(m.queue().name(), List.of());
            if (kids.isEmpty()) {
                out.put(m.queue().name(), given[i]);
                continue;
            }
            List<Member> next = new ArrayList<>();
            for (Queue c : kids) {
                next.add(Member.of(c, subtree.getOrDefault(c.name(), 0L)));
            }
            long ownDemand = own.getOrDefault(m.queue().name(), 0L);
            if (ownDemand > 0) {
                next.add(new Member(null, m.queue().name(), m.weight(), 0, ownDemand));
            }
            share(next, given[i], children, own, subtree, out);
        }
    }

    /** Guarantees first (scaled down if they exceed the amount), then weighted water-filling up to each limit. */
    static long[] divide(List<Member> members, long amount) {
        int n = members.size();
        long[] given = new long[n];
        long guaranteed = 0;
        for (int i = 0; i < n; i++) {
            given[i] = Math.min(members.get(i).guarantee(), members.get(i).limit());
            guaranteed += given[i];
        }
        if (guaranteed > amount) {
            long sum = 0;
            for (int i = 0; i < n; i++) {
                given[i] = guaranteed == 0 ? 0 : (long) Math.floor((double) given[i] * amount / guaranteed);
                sum += given[i];
            }
            guaranteed = sum;
        }
        long left = amount - guaranteed;
        while (left > 0) {
            double weights = 0;
            for (int i = 0; i < n; i++) {
                if (given[i] < members.get(i).limit()) {
                    weights += members.get(i).weight();
                }
            }
            if (weights == 0) {
                break;
            }
            long handed = 0;
            for (int i = 0; i < n; i++) {
                Member m = members.get(i);
                if (given[i] < m.limit()) {
                    long take = Math.min((long) Math.floor(left * m.weight() / weights), m.limit() - given[i]);
                    given[i] += take;
                    handed += take;
                }
            }
            if (handed == 0) {
                break; // what is left is less than a milli-GPU per claimant
            }
            left -= handed;
        }
        return given;
    }
}
