package dev.gantry.quota.domain;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;

/**
 * Properties of the fair-share function on random valid trees (guarantees that fit, capabilities
 * within the parent's) and random demands and usage over GPUs, CPU and memory.
 */
class FairSharePropertiesTest {

    private static final double INF = Double.POSITIVE_INFINITY;

    record Scenario(Amounts capacity, List<FairShare.QueueInput> queues) {
        FairShare.Result run() {
            return FairShare.compute(new FairShare.Input(capacity, queues));
        }

        FairShare.Input input() {
            return new FairShare.Input(capacity, queues);
        }
    }

    /** A random tree of 1..9 queues, up to three levels, with valid guarantees and capabilities. */
    static Scenario scenario(long seed) {
        Random random = new Random(seed);
        boolean multiResource = random.nextBoolean();
        Amounts capacity = new Amounts(random.nextInt(65), multiResource ? random.nextInt(500_001) : 0,
                multiResource ? random.nextInt(2_000_001) : 0);
        int n = 1 + random.nextInt(9);
        List<FairShare.QueueInput> queues = new ArrayList<>();
        Map<String, double[]> guaranteeBudget = new HashMap<>(); // what is left of each queue's guarantee for its children
        Map<String, Amounts> caps = new HashMap<>();
        Map<String, Integer> depth = new HashMap<>();
        double[] topBudget = capacity.toArray();
        for (int i = 0; i < n; i++) {
            String name = "q" + i;
            String parent = null;
            if (i > 0 && random.nextInt(3) > 0) {
                String candidate = "q" + random.nextInt(i);
                if (depth.get(candidate) < 2) {
                    parent = candidate;
                }
            }
            depth.put(name, parent == null ? 0 : depth.get(parent) + 1);
            double[] budget = parent == null ? topBudget : guaranteeBudget.get(parent);
            Amounts parentCap = parent == null ? new Amounts(INF, INF, INF) : caps.get(parent);
            double[] g = new double[3];
            double[] c = new double[3];
            for (int r = 0; r < 3; r++) {
                g[r] = random.nextInt(3) == 0 ? Math.floor(budget[r] * random.nextDouble()) : 0;
                budget[r] -= g[r];
                double pc = parentCap.get(r);
                if (random.nextInt(3) == 0) {
                    double upper = Double.isInfinite(pc) ? g[r] + 50 + capacity.get(r) : pc;
                    c[r] = Math.floor(g[r] + (upper - g[r]) * random.nextDouble());
                } else {
                    c[r] = pc;
                }
            }
            guaranteeBudget.put(name, g.clone());
            caps.put(name, Amounts.of(c));
            Amounts demand = new Amounts(random.nextInt(3) == 0 ? 0 : random.nextInt(41),
                    multiResource ? random.nextInt(200_001) : 0, multiResource ? random.nextInt(800_001) : 0);
            queues.add(new FairShare.QueueInput(name, parent, 1 + random.nextInt(5), Amounts.of(g), Amounts.of(c), demand,
                    random.nextInt(4) == 0 ? random.nextDouble() * 100 : 0));
        }
        return new Scenario(capacity, queues);
    }

    private static double eps(double scale) {
        return 1e-6 * Math.max(1, scale);
    }

    private static List<FairShare.Share> children(FairShare.Result result, String parent) {
        return result.shares().values().stream()
                .filter(s -> parent == null ? s.parent() == null : parent.equals(s.parent())).toList();
    }

    private static boolean isLeaf(FairShare.Result result, String name) {
        return children(result, name).isEmpty();
    }

    @Property(tries = 400)
    void deservedNeverExceedsCapacityOrTheParentsShare(@ForAll @LongRange(min = 0, max = 1_000_000_000L) long seed) {
        Scenario s = scenario(seed);
        FairShare.Result result = s.run();
        for (int r = 0; r < 3; r++) {
            final int res = r;
            double top = children(result, null).stream().mapToDouble(q -> q.deserved().get(res)).sum();
            assertThat(top).isLessThanOrEqualTo(s.capacity().get(r) + eps(s.capacity().get(r)));
            for (FairShare.Share parent : result.shares().values()) {
                double sum = children(result, parent.name()).stream().mapToDouble(q -> q.deserved().get(res)).sum();
                assertThat(sum).isLessThanOrEqualTo(parent.deserved().get(r) + eps(parent.deserved().get(r)));
            }
        }
    }

    @Property(tries = 400)
    void noQueueAboveItsCapabilityOrItsDemand(@ForAll @LongRange(min = 0, max = 1_000_000_000L) long seed) {
        Scenario s = scenario(seed);
        FairShare.Result result = s.run();
        for (FairShare.QueueInput q : s.queues()) {
            FairShare.Share share = result.get(q.name());
            for (int r = 0; r < 3; r++) {
                double d = share.deserved().get(r);
                assertThat(d).as("%s resource %d vs capability", q.name(), r).isLessThanOrEqualTo(q.capability().get(r) + eps(d));
                assertThat(d).as("%s resource %d vs demand", q.name(), r)
                        .isLessThanOrEqualTo(share.effectiveDemand().get(r) + eps(d));
                if (isLeaf(result, q.name())) {
                    assertThat(d).isLessThanOrEqualTo(q.demand().get(r) + eps(d));
                }
                assertThat(d).isGreaterThanOrEqualTo(0);
            }
        }
    }

    @Property(tries = 400)
    void aQueueThatAsksForItsGuaranteeGetsIt(@ForAll @LongRange(min = 0, max = 1_000_000_000L) long seed) {
        Scenario s = scenario(seed);
        FairShare.Result result = s.run();
        for (FairShare.QueueInput q : s.queues()) {
            FairShare.Share share = result.get(q.name());
            for (int r = 0; r < 3; r++) {
                if (share.effectiveDemand().get(r) >= q.guarantee().get(r)) {
                    assertThat(share.deserved().get(r)).as("%s resource %d", q.name(), r)
                            .isGreaterThanOrEqualTo(q.guarantee().get(r) - eps(q.guarantee().get(r)));
                }
            }
        }
    }

    /**
     * Work-conserving: a queue left short of its demand is short because a resource it needs is all
     * shared out among it and its siblings (DRF grows a queue's resources together, so it cannot take
     * a free resource without the one that ran out).
     */
    @Property(tries = 400)
    void noIdleCapacityWhileAQueueThatCouldUseItWaits(@ForAll @LongRange(min = 0, max = 1_000_000_000L) long seed) {
        Scenario s = scenario(seed);
        FairShare.Result result = s.run();
        List<String> parents = new ArrayList<>();
        parents.add(null);
        result.shares().keySet().forEach(parents::add);
        for (String parent : parents) {
            List<FairShare.Share> siblings = children(result, parent);
            if (siblings.isEmpty()) {
                continue;
            }
            Amounts pool = parent == null ? s.capacity() : result.get(parent).deserved();
            for (FairShare.Share c : siblings) {
                boolean short_ = false;
                boolean blocked = false;
                for (int r = 0; r < 3; r++) {
                    if (pool.get(r) <= 0) {
                        continue;
                    }
                    double unmet = c.effectiveDemand().get(r) - c.deserved().get(r);
                    if (unmet > eps(pool.get(r))) {
                        short_ = true;
                        final int res = r;
                        double used = siblings.stream().mapToDouble(x -> x.deserved().get(res)).sum();
                        if (used >= pool.get(r) - eps(pool.get(r)) * 10) {
                            blocked = true;
                        }
                    }
                }
                if (short_) {
                    assertThat(blocked).as("%s is short of its demand while its pool has some of everything it needs", c.name()).isTrue();
                }
            }
        }
    }

    /**
     * Deserved shares grow with weight. Checked without historic usage: with usage, raising one
     * queue's weight also lowers its siblings' normalised shares and so their usage factors, which
     * can shift who runs out of which resource first; monotonicity then holds in effective weight.
     */
    @Property(tries = 400)
    void moreWeightNeverMeansLess(@ForAll @LongRange(min = 0, max = 1_000_000_000L) long seed) {
        Scenario s = scenario(seed);
        List<FairShare.QueueInput> withoutUsage = s.queues().stream()
                .map(q -> new FairShare.QueueInput(q.name(), q.parent(), q.weight(), q.guarantee(), q.capability(), q.demand(), 0))
                .toList();
        FairShare.Result before = FairShare.compute(new FairShare.Input(s.capacity(), withoutUsage));
        Random random = new Random(seed ^ 0x5DEECE66DL);
        int index = random.nextInt(withoutUsage.size());
        FairShare.QueueInput q = withoutUsage.get(index);
        List<FairShare.QueueInput> heavier = new ArrayList<>(withoutUsage);
        heavier.set(index, new FairShare.QueueInput(q.name(), q.parent(), q.weight() + 1 + random.nextInt(5), q.guarantee(),
                q.capability(), q.demand(), 0));
        FairShare.Result after = FairShare.compute(new FairShare.Input(s.capacity(), heavier));
        for (int r = 0; r < 3; r++) {
            double b = before.get(q.name()).deserved().get(r);
            assertThat(after.get(q.name()).deserved().get(r)).as("%s resource %d", q.name(), r).isGreaterThanOrEqualTo(b - eps(b));
        }
    }

    @Property(tries = 100)
    void theSameInputGivesTheSameShares(@ForAll @LongRange(min = 0, max = 1_000_000_000L) long seed) {
        Scenario s = scenario(seed);
        assertThat(FairShare.compute(s.input())).isEqualTo(FairShare.compute(s.input()));
    }
}
