package dev.gantry.quota.domain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Worked examples, each checked by hand in its comment. */
class FairShareExamplesTest {

    static final double INF = Double.POSITIVE_INFINITY;

    static FairShare.QueueInput queue(String name, String parent, double weight, double guaranteeGpus, double capabilityGpus,
            double demandGpus) {
        return new FairShare.QueueInput(name, parent, weight, new Amounts(guaranteeGpus, 0, 0), new Amounts(capabilityGpus, INF, INF),
                new Amounts(demandGpus, 0, 0), 0);
    }

    static FairShare.Result gpus(double capacity, FairShare.QueueInput... queues) {
        return FairShare.compute(new FairShare.Input(new Amounts(capacity, 0, 0), List.of(queues)));
    }

    @Test
    void seedExampleUrgentAndNormalOnSixteenGpus() {
        // urgent: weight 2, capability 8; normal: weight 1, capability 16; both want 16 GPUs.
        // Effective demand: urgent min(16, 8) = 8, normal 16. Water-filling by weight 2:1 would give
        // urgent 10.67 and normal 5.33, but urgent is capped at 8 (its capability); the 8 GPUs left
        // all go to normal, which still wants them. Result: urgent 8, normal 8, nothing idle.
        FairShare.Result r = gpus(16, queue("urgent", null, 2, 0, 8, 16), queue("normal", null, 1, 0, 16, 16));

        assertThat(r.get("urgent").deserved().gpus()).isCloseTo(8, within(1e-9));
        assertThat(r.get("normal").deserved().gpus()).isCloseTo(8, within(1e-9));
        assertThat(r.get("urgent").limit()).isEqualTo(FairShare.Limit.CAPABILITY);
        assertThat(r.get("normal").limit()).isEqualTo(FairShare.Limit.POOL);
        assertThat(r.get("urgent").explanation()).contains("capped by its capability (8 GPUs");
        assertThat(r.get("normal").explanation()).contains("GPUs of the cluster are all shared out");
    }

    @Test
    void weightsSplitWhatIsLeftInProportion() {
        // 12 GPUs, a (weight 2) and b (weight 1) both want 12: a gets 2/3 of 12 = 8, b 1/3 = 4.
        FairShare.Result r = gpus(12, queue("a", null, 2, 0, INF, 12), queue("b", null, 1, 0, INF, 12));
        assertThat(r.get("a").deserved().gpus()).isCloseTo(8, within(1e-9));
        assertThat(r.get("b").deserved().gpus()).isCloseTo(4, within(1e-9));
    }

    @Test
    void guaranteesComeFirstThenWeights() {
        // 16 GPUs. a: guarantee 10, weight 1, wants 16; b: no guarantee, weight 3, wants 16.
        // Guarantees: a gets 10. Left: 6, split 1:3 by weight: a 1.5, b 4.5. a = 11.5, b = 4.5.
        FairShare.Result r = gpus(16, queue("a", null, 1, 10, INF, 16), queue("b", null, 3, 0, INF, 16));
        assertThat(r.get("a").guaranteed().gpus()).isCloseTo(10, within(1e-9));
        assertThat(r.get("a").deserved().gpus()).isCloseTo(11.5, within(1e-9));
        assertThat(r.get("b").deserved().gpus()).isCloseTo(4.5, within(1e-9));
    }

    @Test
    void anIdleGuaranteeIsLentToOthers() {
        // a is guaranteed 8 but wants only 2: it gets its 2, and b (wanting 16) takes the other 14.
        FairShare.Result r = gpus(16, queue("a", null, 1, 8, INF, 2), queue("b", null, 1, 0, INF, 16));
        assertThat(r.get("a").deserved().gpus()).isCloseTo(2, within(1e-9));
        assertThat(r.get("b").deserved().gpus()).isCloseTo(14, within(1e-9));
    }

    @Test
    void sharesFlowDownTheTree() {
        // 32 GPUs; orgs research (weight 3) and ops (weight 1), everything saturated.
        // Top level: research 24, ops 8. Inside research: vision (weight 1) and nlp (weight 2, wants only 6):
        // nlp gets its 6, vision the 18 left. ops has one team, infra, which gets all 8.
        FairShare.Result r = gpus(32,
                queue("research", null, 3, 0, INF, 0), queue("ops", null, 1, 0, INF, 0),
                queue("vision", "research", 1, 0, INF, 100), queue("nlp", "research", 2, 0, INF, 6),
                queue("infra", "ops", 1, 0, INF, 100));
        assertThat(r.get("research").deserved().gpus()).isCloseTo(24, within(1e-9));
        assertThat(r.get("ops").deserved().gpus()).isCloseTo(8, within(1e-9));
        assertThat(r.get("nlp").deserved().gpus()).isCloseTo(6, within(1e-9));
        assertThat(r.get("vision").deserved().gpus()).isCloseTo(18, within(1e-9));
        assertThat(r.get("infra").deserved().gpus()).isCloseTo(8, within(1e-9));
        assertThat(r.get("vision").explanation()).contains("parent 'research' (24 GPUs)");
    }

    @Test
    void dominantResourceFairnessAcrossGpusAndCpu() {
        // Capacity 10 GPUs, 100 CPU cores (100000m). Equal weights, so DRF equalises dominant shares t.
        // gpu-heavy wants (10 GPUs, 10 cores): dominant resource GPUs (10/10 = 1), it gets fraction t.
        // cpu-heavy wants (1 GPU, 200 cores): dominant resource CPU (200/100 = 2), it gets fraction t/2.
        // GPUs: 10t + t/2 <= 10 -> t <= 0.952; CPU: 10t + 200(t/2) = 110t <= 100 -> t <= 0.909. CPU binds
        // at t = 10/11: gpu-heavy 9.09 GPUs, cpu-heavy 90.9 cores; 0.45 GPUs stay free, nobody can use
        // them without CPU.
        FairShare.Result r = FairShare.compute(new FairShare.Input(new Amounts(10, 100_000, 0), List.of(
                new FairShare.QueueInput("gpu-heavy", null, 1, Amounts.ZERO, new Amounts(INF, INF, INF), new Amounts(10, 10_000, 0), 0),
                new FairShare.QueueInput("cpu-heavy", null, 1, Amounts.ZERO, new Amounts(INF, INF, INF), new Amounts(1, 200_000, 0), 0))));
        double f = 100.0 / 110;
        assertThat(r.get("gpu-heavy").deserved().gpus()).isCloseTo(10 * f, within(1e-6));
        assertThat(r.get("cpu-heavy").deserved().cpuMillis()).isCloseTo(100_000 * f, within(1e-3));
        assertThat(r.get("gpu-heavy").exhausted()).isEqualTo(1);
        assertThat(r.get("gpu-heavy").explanation()).contains("CPU millicores of the cluster ran out");
    }

    @Test
    void historicUsageLowersTheWeightOfHeavyUsers() {
        // Equal weights, 12 GPUs, both saturated. a used 3 units, b 1: a's usage part 3/4, share 1/2,
        // factor 2^(-1.5) = 0.354; b: 2^(-0.5) = 0.707. Effective weights 0.354 : 0.707 = 1 : 2, so a 4, b 8.
        FairShare.Result r = FairShare.compute(new FairShare.Input(new Amounts(12, 0, 0), List.of(
                new FairShare.QueueInput("a", null, 1, Amounts.ZERO, new Amounts(INF, INF, INF), new Amounts(12, 0, 0), 3),
                new FairShare.QueueInput("b", null, 1, Amounts.ZERO, new Amounts(INF, INF, INF), new Amounts(12, 0, 0), 1))));
        assertThat(r.get("a").usageFactor()).isCloseTo(Math.pow(2, -1.5), within(1e-9));
        assertThat(r.get("a").deserved().gpus()).isCloseTo(4, within(1e-6));
        assertThat(r.get("b").deserved().gpus()).isCloseTo(8, within(1e-6));
        assertThat(r.get("a").explanation()).contains("usage factor 0.354");
    }

    @Test
    void guaranteesLargerThanTheClusterAreScaledDown() {
        // 8 GPUs, a and b each guaranteed 8 and wanting 8: guarantees scaled by 8/16, 4 each.
        FairShare.Result r = gpus(8, queue("a", null, 1, 8, INF, 8), queue("b", null, 1, 8, INF, 8));
        assertThat(r.get("a").deserved().gpus()).isCloseTo(4, within(1e-9));
        assertThat(r.get("a").guaranteeScaled()).isTrue();
    }

    @Test
    void usageDecaysByHalfEachHalfLife() {
        assertThat(UsageDecay.advance(8, 3600, 3600, 0)).isCloseTo(4, within(1e-9));
        assertThat(UsageDecay.advance(0, 1800, 1e12, 0.5)).isCloseTo(0.25, within(1e-6));
        assertThat(UsageDecay.advance(8, 10, 0, 1)).isZero();
        assertThat(UsageDecay.dominantShare(new Amounts(4, 10_000, 0), new Amounts(16, 20_000, 0))).isCloseTo(0.5, within(1e-12));
    }
}
