package dev.gantry.quota.domain;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What each queue deserves now: weighted max-min fair shares computed down the queue tree, with
 * guarantees first, capabilities as caps, Dominant Resource Fairness across GPUs, CPU and memory,
 * and past usage (decayed) lowering the weight of queues that have had more than their share.
 *
 * <p>A pure function: the same input always gives the same shares. The algorithm, level by level
 * from the cluster down (the cluster's capacity is the pool of the top-level queues; a queue's
 * deserved amount is the pool of its children):
 * <ol>
 * <li>Effective demand, bottom-up: a leaf wants what it runs plus what waits in it; a parent wants
 * what its children effectively want; both capped per resource by the queue's capability.</li>
 * <li>Guarantees: each sibling first gets its guarantee, but never more than its effective demand
 * (an idle guarantee is lent to others). If the guarantees do not fit the pool (the cluster is
 * smaller than promised) they are scaled down in proportion.</li>
 * <li>Water-filling over the rest: each sibling that still wants more receives a growing fraction
 * of its remaining demand vector, so its dominant share (its largest share of any resource of the
 * pool) grows in proportion to its effective weight. A sibling stops when its demand is met, or
 * when a resource it needs is used up; the others keep filling with what remains (work-conserving).</li>
 * <li>Historic usage (Slurm's fair-share factor): among siblings, with {@code U} a queue's part of
 * their decayed usage and {@code S} its part of their weight, the effective weight is
 * {@code weight × 2^(-U/S)}, never below 1/64 of the weight. A queue that used exactly its share
 * keeps the same ratio to a sibling that did too; one that used more yields to one that used less.</li>
 * </ol>
 * Guarantees are untouched by usage. Resources the pool has none of are left out of the
 * dominant-share computation (a queue cannot receive them anyway).
 */
public final class FairShare {

    /** Lowest usage factor: a heavy user still keeps 1/64 of its weight. */
    public static final double MIN_USAGE_FACTOR = 1.0 / 64;

    private static final int BISECTION_STEPS = 200;

    private FairShare() {
    }

    /**
     * One queue as fair share sees it.
     *
     * @param demand own demand (running plus pending); only leaves' demand counts, jobs belong to leaf queues
     * @param usage  decayed historic usage in any consistent unit (Gantry uses dominant-share hours)
     */
    public record QueueInput(String name, String parent, double weight, Amounts guarantee, Amounts capability, Amounts demand,
            double usage) {
    }

    public record Input(Amounts capacity, List<QueueInput> queues) {
    }

    /** Why a queue's deserved amount is not larger. */
    public enum Limit {
        /** it has all it (effectively) asks for */
        DEMAND,
        /** its capability caps what it may ask for, and it has all of that */
        CAPABILITY,
        /** a resource it needs ran out in its parent's pool */
        POOL
    }

    /**
     * A queue's share and the reasons for it.
     *
     * @param demand          raw demand of its subtree (own demand for a leaf, the children's effective demand for a parent)
     * @param effectiveDemand demand capped by capability
     * @param guaranteed      the part received in the guarantee step
     * @param deserved        everything it deserves now
     * @param pool            what its parent (or the cluster) had to share among it and its siblings
     * @param exhausted       the resource that ran out (index into {@link Amounts#NAMES}) when {@code limit} is POOL, else -1
     * @param guaranteeScaled true when its siblings' guarantees did not fit the pool and were scaled down
     */
    public record Share(String name, String parent, Amounts demand, Amounts effectiveDemand, Amounts guarantee, Amounts capability,
            Amounts guaranteed, Amounts deserved, Amounts pool, double weight, double usage, double usageFactor, double effectiveWeight,
            Limit limit, int exhausted, boolean guaranteeScaled) {

        /** A sentence on how the deserved GPUs (and the dominant resource, if not GPUs) came about. */
        public String explanation() {
            String poolName = parent == null ? "the cluster" : "parent '" + parent + "'";
            StringBuilder s = new StringBuilder();
            s.append(String.format(Locale.ROOT, "deserves %s GPUs: ", num(deserved.gpus())));
            if (guaranteed.gpus() > 0) {
                s.append(String.format(Locale.ROOT, "%s guaranteed first (guarantee %s, effective demand %s)%s; ",
                        num(guaranteed.gpus()), num(guarantee.gpus()), num(effectiveDemand.gpus()),
                        guaranteeScaled ? ", scaled down because the guarantees of its siblings exceed what " + poolName + " has" : ""));
            }
            double extra = Math.max(0, deserved.gpus() - guaranteed.gpus());
            s.append(String.format(Locale.ROOT, "%s more from what %s (%s GPUs) has left after guarantees, shared by weight %s",
                    num(extra), poolName, num(pool.gpus()), num(weight)));
            if (usageFactor < 1) {
                s.append(String.format(Locale.ROOT, " x usage factor %s = %s", num(usageFactor), num(effectiveWeight)));
            }
            s.append("; ");
            s.append(switch (limit) {
                case DEMAND -> String.format(Locale.ROOT, "that covers its whole demand (%s GPUs)", num(demand.gpus()));
                case CAPABILITY -> cappedBy();
                case POOL -> exhausted == 0
                        ? "it stops there because the GPUs of " + poolName + " are all shared out"
                        : "it stops there because the " + Amounts.UNITS[exhausted] + " of " + poolName
                                + " ran out (dominant-resource fairness: a queue's shares of all resources grow together)";
            });
            return s.toString();
        }

        private String cappedBy() {
            for (int r = 0; r < Amounts.DIMENSIONS; r++) {
                if (capability.get(r) < demand.get(r)) {
                    return String.format(Locale.ROOT, "it is capped by its capability (%s %s, demand %s)",
                            num(capability.get(r)), Amounts.UNITS[r], num(demand.get(r)));
                }
            }
            return "it is capped by its capability";
        }
    }

    public record Result(Amounts capacity, Map<String, Share> shares) {
        public Share get(String name) {
            return shares.get(name);
        }
    }

    private static final class Node {
        final QueueInput in;
        final List<Node> children = new ArrayList<>();
        Amounts rawDemand = Amounts.ZERO;
        Amounts effDemand = Amounts.ZERO;
        double subtreeUsage;
        Amounts guaranteed = Amounts.ZERO;
        Amounts deserved = Amounts.ZERO;
        Amounts pool = Amounts.ZERO;
        double usageFactor = 1;
        double effWeight;
        Limit limit = Limit.DEMAND;
        int exhausted = -1;
        boolean guaranteeScaled;

        Node(QueueInput in) {
            this.in = in;
            this.effWeight = in.weight();
        }
    }

    public static Result compute(Input input) {
        Map<String, Node> nodes = new LinkedHashMap<>();
        input.queues().stream().sorted(Comparator.comparing(QueueInput::name)).forEach(q -> nodes.put(q.name(), new Node(q)));
        List<Node> roots = new ArrayList<>();
        for (Node n : nodes.values()) {
            Node parent = n.in.parent() == null ? null : nodes.get(n.in.parent());
            if (parent == null) {
                roots.add(n);
            } else {
                parent.children.add(n);
            }
        }
        Set<String> reached = new HashSet<>();
        roots.forEach(r -> demand(r, reached));
        distribute(input.capacity(), roots);
        Map<String, Share> shares = new LinkedHashMap<>();
        for (Node n : nodes.values()) {
            if (!reached.contains(n.in.name())) {
                continue; // on a cycle: not in the tree (the service never stores one)
            }
            shares.put(n.in.name(), new Share(n.in.name(), n.in.parent(), n.rawDemand, n.effDemand, n.in.guarantee(),
                    n.in.capability(), n.guaranteed, n.deserved, n.pool, n.in.weight(), n.subtreeUsage, n.usageFactor, n.effWeight,
                    n.limit, n.exhausted, n.guaranteeScaled));
        }
        return new Result(input.capacity(), shares);
    }

    private static void demand(Node n, Set<String> reached) {
        reached.add(n.in.name());
        if (n.children.isEmpty()) {
            n.rawDemand = nonNegative(n.in.demand());
        } else {
            Amounts sum = Amounts.ZERO;
            for (Node c : n.children) {
                demand(c, reached);
                sum = sum.plus(c.effDemand);
            }
            n.rawDemand = sum;
        }
        n.subtreeUsage = Math.max(0, n.in.usage()) + n.children.stream().mapToDouble(c -> c.subtreeUsage).sum();
        n.effDemand = n.rawDemand.min(n.in.capability());
    }

    private static Amounts nonNegative(Amounts a) {
        return new Amounts(Math.max(0, a.gpus()), Math.max(0, a.cpuMillis()), Math.max(0, a.memoryMiB()));
    }

    /** Shares {@code poolAmounts} among {@code siblings}, then recurses into each sibling's children. */
    private static void distribute(Amounts poolAmounts, List<Node> siblings) {
        if (siblings.isEmpty()) {
            return;
        }
        int n = siblings.size();
        double[] pool = nonNegative(poolAmounts).toArray();
        usageFactors(siblings);

        // 1. guarantees, limited by effective demand, scaled down if they do not fit the pool
        double[][] x = new double[n][Amounts.DIMENSIONS];
        double[] sumG = new double[Amounts.DIMENSIONS];
        for (int i = 0; i < n; i++) {
            Node c = siblings.get(i);
            for (int r = 0; r < Amounts.DIMENSIONS; r++) {
                x[i][r] = Math.max(0, Math.min(c.in.guarantee().get(r), c.effDemand.get(r)));
                sumG[r] += x[i][r];
            }
        }
        for (int r = 0; r < Amounts.DIMENSIONS; r++) {
            if (sumG[r] > pool[r]) {
                double scale = sumG[r] == 0 ? 0 : pool[r] / sumG[r];
                for (int i = 0; i < n; i++) {
                    if (x[i][r] > 0) {
                        x[i][r] *= scale;
                        siblings.get(i).guaranteeScaled = true;
                    }
                }
            }
        }
        double[] rem = pool.clone();
        for (int i = 0; i < n; i++) {
            siblings.get(i).guaranteed = Amounts.of(x[i].clone());
            for (int r = 0; r < Amounts.DIMENSIONS; r++) {
                rem[r] = Math.max(0, rem[r] - x[i][r]);
            }
        }

        // 2. weighted DRF water-filling of what is left
        double[][] need = new double[n][Amounts.DIMENSIONS];
        double[] dominant = new double[n];
        List<Integer> active = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Node c = siblings.get(i);
            for (int r = 0; r < Amounts.DIMENSIONS; r++) {
                need[i][r] = pool[r] > 0 ? Math.max(0, c.effDemand.get(r) - x[i][r]) : 0;
                if (pool[r] > 0) {
                    dominant[i] = Math.max(dominant[i], need[i][r] / pool[r]);
                }
            }
            c.limit = limitOf(c);
            if (dominant[i] > 0) {
                active.add(i);
            }
        }
        double t = 0;
        while (!active.isEmpty()) {
            double hi = 0;
            for (int i : active) {
                hi = Math.max(hi, dominant[i] / siblings.get(i).effWeight);
            }
            if (fits(hi, active, siblings, need, dominant, rem)) {
                for (int i : active) {
                    add(x[i], need[i], 1);
                }
                break;
            }
            double lo = t;
            for (int step = 0; step < BISECTION_STEPS && hi > lo; step++) {
                double mid = lo + (hi - lo) / 2;
                if (mid <= lo || mid >= hi) {
                    break;
                }
                if (fits(mid, active, siblings, need, dominant, rem)) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            t = lo;
            double[] used = new double[Amounts.DIMENSIONS];
            for (int i : active) {
                add(used, need[i], fraction(t, i, siblings, dominant));
            }
            boolean[] saturated = new boolean[Amounts.DIMENSIONS];
            for (int r = 0; r < Amounts.DIMENSIONS; r++) {
                saturated[r] = pool[r] > 0 && rem[r] - used[r] <= 1e-9 * Math.max(1, pool[r]);
            }
            List<Integer> frozen = new ArrayList<>();
            for (int i : active) {
                double f = fraction(t, i, siblings, dominant);
                Node c = siblings.get(i);
                if (f >= 1 - 1e-12) {
                    frozen.add(i);
                    continue;
                }
                for (int r = 0; r < Amounts.DIMENSIONS; r++) {
                    if (saturated[r] && need[i][r] > 0) {
                        c.limit = Limit.POOL;
                        c.exhausted = r;
                        frozen.add(i);
                        break;
                    }
                }
            }
            if (frozen.isEmpty()) { // numerically stuck: stop everyone where they are
                frozen.addAll(active);
                for (int i : active) {
                    siblings.get(i).limit = Limit.POOL;
                    siblings.get(i).exhausted = mostUsed(used, rem);
                }
            }
            for (int i : frozen) {
                double f = Math.min(1, fraction(t, i, siblings, dominant));
                add(x[i], need[i], f);
                for (int r = 0; r < Amounts.DIMENSIONS; r++) {
                    rem[r] = Math.max(0, rem[r] - f * need[i][r]);
                }
            }
            active.removeAll(frozen);
        }

        for (int i = 0; i < n; i++) {
            Node c = siblings.get(i);
            c.deserved = Amounts.of(x[i]);
            c.pool = Amounts.of(pool);
            distribute(c.deserved, c.children);
        }
    }

    private static Limit limitOf(Node c) {
        for (int r = 0; r < Amounts.DIMENSIONS; r++) {
            if (c.in.capability().get(r) < c.rawDemand.get(r)) {
                return Limit.CAPABILITY;
            }
        }
        return Limit.DEMAND;
    }

    private static int mostUsed(double[] used, double[] rem) {
        int best = 0;
        double bestRatio = -1;
        for (int r = 0; r < Amounts.DIMENSIONS; r++) {
            double ratio = rem[r] > 0 ? used[r] / rem[r] : (used[r] > 0 ? Double.MAX_VALUE : 0);
            if (ratio > bestRatio) {
                bestRatio = ratio;
                best = r;
            }
        }
        return best;
    }

    private static double fraction(double t, int i, List<Node> siblings, double[] dominant) {
        return Math.min(1, siblings.get(i).effWeight * t / dominant[i]);
    }

    private static boolean fits(double t, List<Integer> active, List<Node> siblings, double[][] need, double[] dominant, double[] rem) {
        double[] used = new double[Amounts.DIMENSIONS];
        for (int i : active) {
            add(used, need[i], fraction(t, i, siblings, dominant));
        }
        for (int r = 0; r < Amounts.DIMENSIONS; r++) {
            if (used[r] > rem[r]) {
                return false;
            }
        }
        return true;
    }

    private static void add(double[] into, double[] amounts, double factor) {
        for (int r = 0; r < Amounts.DIMENSIONS; r++) {
            into[r] += amounts[r] * factor;
        }
    }

    /** Slurm-style fair-share factor 2^(-U/S) among siblings, floored at {@link #MIN_USAGE_FACTOR}. */
    private static void usageFactors(List<Node> siblings) {
        double weights = siblings.stream().mapToDouble(c -> c.in.weight()).sum();
        double usage = siblings.stream().mapToDouble(c -> c.subtreeUsage).sum();
        for (Node c : siblings) {
            double normalizedShares = c.in.weight() / weights;
            double normalizedUsage = usage > 0 ? c.subtreeUsage / usage : 0;
            c.usageFactor = Math.max(MIN_USAGE_FACTOR, Math.pow(2, -normalizedUsage / normalizedShares));
            c.effWeight = c.in.weight() * c.usageFactor;
        }
    }

    private static String num(double value) {
        double rounded = Amounts.round(value);
        if (Double.isInfinite(value)) {
            return "unbounded";
        }
        return rounded == Math.rint(rounded) ? String.valueOf((long) rounded) : String.valueOf(rounded);
    }
}
