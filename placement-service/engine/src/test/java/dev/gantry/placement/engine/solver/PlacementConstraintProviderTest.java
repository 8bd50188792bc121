package dev.gantry.placement.engine.solver;

import static dev.gantry.placement.engine.solver.SolverFixtures.N0;
import static dev.gantry.placement.engine.solver.SolverFixtures.N1;
import static dev.gantry.placement.engine.solver.SolverFixtures.Q;
import static dev.gantry.placement.engine.solver.SolverFixtures.option;
import static dev.gantry.placement.engine.solver.SolverFixtures.pending;
import static dev.gantry.placement.engine.solver.SolverFixtures.place;
import static dev.gantry.placement.engine.solver.SolverFixtures.queue;
import static dev.gantry.placement.engine.solver.SolverFixtures.running;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ai.timefold.solver.core.api.score.stream.test.ConstraintVerifier;
import dev.gantry.placement.engine.solver.justifications.GpuConflictJustification;
import dev.gantry.placement.engine.solver.justifications.UnplacedGpusJustification;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** One test class per constraint, penalized and unpenalized; the verifier ignores weights. */
class PlacementConstraintProviderTest {
    private static final ConstraintVerifier<PlacementConstraintProvider, PlacementSolution> VERIFIER =
            ConstraintVerifier.build(new PlacementConstraintProvider(), PlacementSolution.class, GangAssignment.class);

    @Nested
    class GpuConflict {
        @Test
        void penalizesTwoGangsOnOneGpu() {
            VERIFIER.verifyThat(PlacementConstraintProvider::gpuConflict)
                    .given(pending("a", Q, 0, 2000, place(N0, 0, 1)), pending("b", Q, 0, 1000, place(N0, 1)))
                    .penalizesBy(1000);
        }

        @Test
        void penalizesSharingBeyondOneGpu() {
            var a = pending("a", Q, 0, 600, option(PlacementOption.Kind.PLACE, N0, 600, 0, 0, 3));
            var b = pending("b", Q, 0, 500, option(PlacementOption.Kind.PLACE, N0, 500, 0, 0, 3));
            VERIFIER.verifyThat(PlacementConstraintProvider::gpuConflict).given(a, b).penalizesBy(100);
        }

        @Test
        void acceptsDisjointGpusAndSharingWithinOneGpu() {
            var a = pending("a", Q, 0, 600, option(PlacementOption.Kind.PLACE, N0, 600, 0, 0, 3));
            var b = pending("b", Q, 0, 400, option(PlacementOption.Kind.PLACE, N0, 400, 0, 0, 3));
            VERIFIER.verifyThat(PlacementConstraintProvider::gpuConflict)
                    .given(a, b, pending("c", Q, 0, 2000, place(N0, 0, 1)), pending("d", Q, 0, 1000, place(N1, 1)))
                    .penalizesBy(0);
        }

        @Test
        void justifiesWithTheGpu() {
            VERIFIER.verifyThat(PlacementConstraintProvider::gpuConflict)
                    .given(pending("a", Q, 0, 1000, place(N0, 5)), pending("b", Q, 0, 1000, place(N0, 5)))
                    .justifiesWith(new GpuConflictJustification("n0", 5, 2000, "GPU n0/5 asked for 2000 milli"));
        }
    }

    @Nested
    class CpuCapacity {
        @Test
        void penalizesByCoresOver() {
            var a = pending("a", Q, 0, 1000, option(PlacementOption.Kind.PLACE, N0, null, 6000, 0, 0));
            var b = pending("b", Q, 0, 1000, option(PlacementOption.Kind.PLACE, N0, null, 6000, 0, 1));
            VERIFIER.verifyThat(PlacementConstraintProvider::cpuCapacity).given(a, b).penalizesBy(2);
        }

        @Test
        void acceptsWithinAllocatable() {
            var a = pending("a", Q, 0, 1000, option(PlacementOption.Kind.PLACE, N0, null, 4000, 0, 0));
            var b = pending("b", Q, 0, 1000, option(PlacementOption.Kind.PLACE, N0, null, 6000, 0, 1));
            VERIFIER.verifyThat(PlacementConstraintProvider::cpuCapacity).given(a, b).penalizesBy(0);
        }
    }

    @Nested
    class MemoryCapacity {
        @Test
        void penalizesByGiBOver() {
            var a = pending("a", Q, 0, 1000, option(PlacementOption.Kind.PLACE, N0, null, 0, 8000, 0));
            var b = pending("b", Q, 0, 1000, option(PlacementOption.Kind.PLACE, N0, null, 0, 4048, 1));
            VERIFIER.verifyThat(PlacementConstraintProvider::memoryCapacity).given(a, b).penalizesBy(2);
        }

        @Test
        void acceptsWithinAllocatable() {
            var a = pending("a", Q, 0, 1000, option(PlacementOption.Kind.PLACE, N0, null, 0, 5000, 0));
            VERIFIER.verifyThat(PlacementConstraintProvider::memoryCapacity).given(a).penalizesBy(0);
        }
    }

    @Nested
    class QueueCapability {
        @Test
        void penalizesGpusAboveCapability() {
            QueueFacts capped = queue("capped", 2000, 0, 0, true);
            VERIFIER.verifyThat(PlacementConstraintProvider::queueCapability)
                    .given(pending("a", capped, 0, 2000, place(N0, 0, 1)), pending("b", capped, 0, 2000, place(N0, 2, 3)))
                    .penalizesBy(2);
        }

        @Test
        void countsChildrenTowardParents() {
            QueueFacts parent = queue("org", 2000, 0, 0, true);
            QueueFacts child = queue("team", 8000, 0, 0, true);
            var a = new GangAssignment("a", GangAssignment.Role.PENDING, child, List.of(child, parent), 0, 3000, 1000, true, true, 0,
                    List.of(place(N0, 0, 1, 2)), null);
            a.setOption(a.getOptions().getFirst());
            VERIFIER.verifyThat(PlacementConstraintProvider::queueCapability).given(a).penalizesBy(1);
        }

        @Test
        void acceptsAQueueThatHeldMoreBefore() {
            QueueFacts over = new QueueFacts("over", 2000, 4000, 4000, 0, 0, 0, true, 0);
            VERIFIER.verifyThat(PlacementConstraintProvider::queueCapability)
                    .given(pending("a", over, 0, 4000, place(N0, 0, 1, 2, 3)))
                    .penalizesBy(0);
        }
    }

    @Nested
    class ProtectedJobPreempted {
        @Test
        void penalizesEvictingANonPreemptibleJob() {
            VERIFIER.verifyThat(PlacementConstraintProvider::protectedJobPreempted)
                    .given(running("r", Q, 0, false, place(N0, 0), null))
                    .penalizesBy(1);
        }

        @Test
        void acceptsEvictingAPreemptibleJobOrKeepingIt() {
            var keep = place(N0, 1);
            VERIFIER.verifyThat(PlacementConstraintProvider::protectedJobPreempted)
                    .given(running("r", Q, 0, true, place(N0, 0), null), running("s", Q, 0, false, keep, keep))
                    .penalizesBy(0);
        }
    }

    @Nested
    class UnjustifiedPreemption {
        @Test
        void penalizesAVictimWithoutHigherPriorityOrReclaim() {
            QueueFacts notBorrowing = queue("q", 8000, 1000, 1000, true);
            VERIFIER.verifyThat(PlacementConstraintProvider::unjustifiedPreemption)
                    .given(running("victim", notBorrowing, 100, true, place(N0, 0), null), pending("p", notBorrowing, 50, 1000, place(N0, 0)))
                    .penalizesBy(1);
        }

        @Test
        void acceptsAHigherPriorityJobOfTheSameQueue() {
            VERIFIER.verifyThat(PlacementConstraintProvider::unjustifiedPreemption)
                    .given(running("victim", Q, 100, true, place(N0, 0), null), pending("p", Q, 500, 1000, place(N0, 0)))
                    .penalizesBy(0);
        }

        @Test
        void acceptsReclaimOfBorrowedGpusByAnotherQueue() {
            acceptsReclaimBy("owner");
        }

        @Test
        void acceptsReclaimByAQueueWhoseNameSortsBeforeTheVictims() {
            // the other-queue check compares queue names both ways: a placed job's queue may sort before or after the victim's
            acceptsReclaimBy("alpha");
        }

        private void acceptsReclaimBy(String ownerQueue) {
            QueueFacts borrowing = queue("lender", 8000, 4000, 1000, true);
            QueueFacts other = queue(ownerQueue, 8000, 0, 4000, true);
            VERIFIER.verifyThat(PlacementConstraintProvider::unjustifiedPreemption)
                    .given(running("victim", borrowing, 900, true, place(N0, 0), null), pending("p", other, 0, 1000, place(N0, 0)))
                    .penalizesBy(0);
        }

        @Test
        void penalizesReclaimWhenOnlyTheVictimsOwnQueueHasAPlacedJob() {
            // borrowing, but no job of another queue is placed: a lower-priority job of its own queue justifies nothing
            QueueFacts borrowing = queue("lender", 8000, 4000, 1000, true);
            QueueFacts other = queue("owner", 8000, 0, 4000, true);
            VERIFIER.verifyThat(PlacementConstraintProvider::unjustifiedPreemption)
                    .given(running("victim", borrowing, 900, true, place(N0, 0), null), pending("own", borrowing, 100, 1000, place(N0, 0)),
                            pending("waits", other, 0, 1000, null))
                    .penalizesBy(1);
        }

        @Test
        void penalizesReclaimFromANonReclaimableQueue() {
            QueueFacts locked = queue("locked", 8000, 4000, 1000, false);
            QueueFacts other = queue("owner", 8000, 0, 4000, true);
            VERIFIER.verifyThat(PlacementConstraintProvider::unjustifiedPreemption)
                    .given(running("victim", locked, 900, true, place(N0, 0), null), pending("p", other, 0, 1000, place(N0, 0)))
                    .penalizesBy(1);
        }
    }

    @Nested
    class ReclaimBelowGuarantee {
        @Test
        void penalizesAQueueLeftUnderItsGuarantee() {
            QueueFacts lender = queue("lender", 8000, 3000, 2000, true);
            var kept = place(N0, 1);
            VERIFIER.verifyThat(PlacementConstraintProvider::reclaimBelowGuarantee)
                    .given(running("victim", lender, 0, true, place(N0, 0, 2), null), running("stays", lender, 0, true, kept, kept))
                    .penalizesBy(1);
        }

        @Test
        void acceptsReclaimDownToTheGuarantee() {
            QueueFacts lender = queue("lender", 8000, 3000, 2000, true);
            var kept = place(N0, 1, 2);
            VERIFIER.verifyThat(PlacementConstraintProvider::reclaimBelowGuarantee)
                    .given(running("victim", lender, 0, true, place(N0, 0), null), running("stays", lender, 0, true, kept, kept))
                    .penalizesBy(0);
        }
    }

    @Nested
    class GuaranteeShortfall {
        /** guarantee 8 GPUs, demand 8 (an 8-GPU job waits), nothing pinned; one GPU of shortfall costs 2600 (above any job's weight here). */
        private final QueueFacts under = new QueueFacts("under", 16_000, 0, 0, 0, 0, 8000, true, 0, 8000, 2600);

        @Test
        void penalizesAQueueLeftUnderItsGuaranteeAboveAnyPriority() {
            VERIFIER.verifyThat(PlacementConstraintProvider::guaranteeShortfall)
                    .given(pending("b-job", under, 100, 8000, null))
                    .penalizesBy(8000L * 2600 / 1000);
        }

        @Test
        void acceptsAQueuePlacedUpToItsGuarantee() {
            VERIFIER.verifyThat(PlacementConstraintProvider::guaranteeShortfall)
                    .given(pending("b-job", under, 100, 8000, place(N0, 0, 1, 2, 3, 4, 5, 6, 7)))
                    .penalizesBy(0);
        }

        @Test
        void countsOnlyTheGuaranteeAQueueCanUse() {
            // guarantee 8 but it runs and waits for 2 GPUs only: placing those 2 meets what it can use
            QueueFacts small = new QueueFacts("small", 16_000, 0, 0, 0, 0, 8000, true, 0, 2000, 2600);
            VERIFIER.verifyThat(PlacementConstraintProvider::guaranteeShortfall)
                    .given(pending("b-job", small, 100, 2000, place(N0, 0, 1)))
                    .penalizesBy(0);
            VERIFIER.verifyThat(PlacementConstraintProvider::guaranteeShortfall)
                    .given(pending("b-job", Q, 100, 2000, null))
                    .penalizesBy(0); // no demand counted: no guarantee term
        }
    }

    @Nested
    class UnplacedGpus {
        @Test
        void penalizesMissingGpusByPriorityWeight() {
            VERIFIER.verifyThat(PlacementConstraintProvider::unplacedGpus)
                    .given(pending("a", Q, 500, 4000, null))
                    .penalizesBy(4000L * 1500 / 1000);
        }

        @Test
        void penalizesTheMissingPartOfAPartialGang() {
            VERIFIER.verifyThat(PlacementConstraintProvider::unplacedGpus)
                    .given(pending("a", Q, 0, 4000, place(N0, 0, 1, 2)))
                    .penalizesBy(1000);
        }

        @Test
        void acceptsAPlacedGang() {
            VERIFIER.verifyThat(PlacementConstraintProvider::unplacedGpus).given(pending("a", Q, 0, 2000, place(N0, 0, 1))).penalizesBy(0);
        }

        @Test
        void justifiesWithTheJob() {
            VERIFIER.verifyThat(PlacementConstraintProvider::unplacedGpus)
                    .given(pending("a", Q, 0, 2000, null))
                    .justifiesWith(new UnplacedGpusJustification("a", 2000, 0, "a leaves 2.0 GPUs unplaced"));
        }
    }

    @Nested
    class PreemptedGpus {
        @Test
        void penalizesByVictimPriority() {
            VERIFIER.verifyThat(PlacementConstraintProvider::preemptedGpus)
                    .given(running("v", Q, 200, true, place(N0, 0, 1), null))
                    .penalizesBy(2000L * 1200 / 1000);
        }

        @Test
        void acceptsKeptAndMigratedJobs() {
            var cur = place(N0, 0);
            VERIFIER.verifyThat(PlacementConstraintProvider::preemptedGpus)
                    .given(running("k", Q, 0, true, cur, cur), running("m", Q, 0, true, place(N0, 1), place(N1, 1)))
                    .penalizesBy(0);
        }
    }

    @Nested
    class PreemptionDisruption {
        @Test
        void penalizesEachVictimBySize() {
            VERIFIER.verifyThat(PlacementConstraintProvider::preemptionDisruption)
                    .given(running("v", Q, 0, true, place(N0, 0, 1), null))
                    .penalizesBy(PlacementConstraintProvider.PREEMPTION_BASE + 2 * PlacementConstraintProvider.PREEMPTION_PER_GPU);
        }

        @Test
        void acceptsNoVictim() {
            var cur = place(N0, 0);
            VERIFIER.verifyThat(PlacementConstraintProvider::preemptionDisruption).given(running("k", Q, 0, true, cur, cur)).penalizesBy(0);
        }
    }

    @Nested
    class MigrationCost {
        @Test
        void penalizesAMove() {
            VERIFIER.verifyThat(PlacementConstraintProvider::migrationCost)
                    .given(running("m", Q, 0, true, place(N0, 1), place(N1, 1)))
                    .penalizesBy(MoveCost.DEFAULT.perMove() + MoveCost.DEFAULT.perGpu());
        }

        @Test
        void penalizesAMoveByTheProfilesMoveCost() {
            GangAssignment a = running("m", Q, 0, true, place(N0, 1), place(N1, 1));
            GangAssignment costly = new GangAssignment(a.getJob(), a.role(), a.queueFacts(), a.queueChain(), a.priority(), a.gpuMilli(),
                    a.gpuWeight(), a.preemptible(), a.checkpointable(), a.runningSeconds(), a.getOptions(), a.current(), new MoveCost(300, 7000));
            costly.setOption(a.getOption());
            VERIFIER.verifyThat(PlacementConstraintProvider::migrationCost).given(costly).penalizesBy(300 + 7000);
        }

        @Test
        void acceptsStayingPut() {
            var cur = place(N0, 0);
            VERIFIER.verifyThat(PlacementConstraintProvider::migrationCost).given(running("k", Q, 0, true, cur, cur)).penalizesBy(0);
        }
    }

    @Nested
    class PreferredNetworkMissed {
        @Test
        void penalizesAGangOutsideItsPreferredDomain() {
            var spread = new PlacementOption(999, PlacementOption.Kind.PLACE, List.of(), List.of(), List.of(), 2000, 2, true, false);
            VERIFIER.verifyThat(PlacementConstraintProvider::preferredNetworkMissed)
                    .given(pending("a", Q, 0, 2000, spread))
                    .penalizesBy(PlacementConstraintProvider.PREFERRED_MISS_BASE + 2 * PlacementConstraintProvider.PREFERRED_MISS_PER_NODE);
        }

        @Test
        void acceptsAMetPreference() {
            var packed = new PlacementOption(998, PlacementOption.Kind.PLACE, List.of(), List.of(), List.of(), 2000, 1, true, true);
            VERIFIER.verifyThat(PlacementConstraintProvider::preferredNetworkMissed).given(pending("a", Q, 0, 2000, packed)).penalizesBy(0);
        }
    }

    @Nested
    class Fragmentation {
        @Test
        void penalizesStrandedGpusAndAWholeNodeLost() {
            // 2 of 8 GPUs used on a whole free node: 6 stranded and the whole node lost
            VERIFIER.verifyThat(PlacementConstraintProvider::fragmentation)
                    .given(pending("a", Q, 0, 2000, place(N0, 0, 1)))
                    .penalizesBy(6 * PlacementConstraintProvider.STRANDED_GPU + PlacementConstraintProvider.WHOLE_NODE_LOST);
        }

        @Test
        void acceptsFillingAPartlyUsedNode() {
            // n1 has 6 GPUs left after pinned work: filling them strands nothing
            VERIFIER.verifyThat(PlacementConstraintProvider::fragmentation)
                    .given(pending("a", Q, 0, 6000, place(N1, 2, 3, 4, 5, 6, 7)))
                    .penalizesBy(0);
        }
    }

    @Nested
    class GpuSpeed {
        private PlacementOption withSlowness(long slownessMilli) {
            PlacementOption o = place(N0, 0, 1);
            return new PlacementOption(o.id() + 20_000, o.kind(), o.tasks(), o.slots(), o.loads(), o.gpuMilli(), 1, false, false, 0, slownessMilli);
        }

        @Test
        void penalizesGpusSlowerThanTheFastestModel() {
            // two GPUs, each 1.5 units slower than the fastest model
            VERIFIER.verifyThat(PlacementConstraintProvider::gpuSpeed)
                    .given(pending("a", Q, 0, 2000, withSlowness(3000)))
                    .penalizesBy(3 * PlacementConstraintProvider.SLOWER_GPU);
        }

        @Test
        void theFastestModelCostsNothing() {
            VERIFIER.verifyThat(PlacementConstraintProvider::gpuSpeed).given(pending("a", Q, 0, 2000, withSlowness(0))).penalizesBy(0);
        }
    }

    @Nested
    class ExpectedFragmentation {
        private PlacementOption withFragmentation(long milli) {
            PlacementOption o = place(N0, 0);
            return new PlacementOption(o.id() + 10_000, o.kind(), o.tasks(), o.slots(), o.loads(), o.gpuMilli(), 1, false, false, milli);
        }

        @Test
        void penalizesFreeGpusTheWorkloadCanNoLongerUse() {
            // 1.5 GPUs more the workload could not use
            VERIFIER.verifyThat(PlacementConstraintProvider::expectedFragmentation)
                    .given(pending("a", Q, 0, 1000, withFragmentation(1500)))
                    .penalizesBy(3 * PlacementConstraintProvider.EXPECTED_FRAGMENTED_GPU / 2);
        }

        @Test
        void rewardsFillingRoomNobodyElseCouldUse() {
            VERIFIER.verifyThat(PlacementConstraintProvider::expectedFragmentation)
                    .given(pending("a", Q, 0, 1000, withFragmentation(-2000)))
                    .rewardsWith(2 * PlacementConstraintProvider.EXPECTED_FRAGMENTED_GPU);
        }

        @Test
        void ignoresAnOptionThatChangesNothing() {
            VERIFIER.verifyThat(PlacementConstraintProvider::expectedFragmentation)
                    .given(pending("a", Q, 0, 1000, withFragmentation(0)))
                    .penalizesBy(0);
        }
    }

    @Nested
    class FairShare {
        @Test
        void penalizesGpusAboveTheDeservedShare() {
            // the fixture queue deserves 4 GPUs; 6 placed is 2 over
            VERIFIER.verifyThat(PlacementConstraintProvider::fairShare)
                    .given(pending("a", Q, 0, 6000, place(N0, 0, 1, 2, 3, 4, 5)))
                    .penalizesBy(2 * PlacementConstraintProvider.OVER_SHARE_PER_GPU);
        }

        @Test
        void acceptsAQueueWithinItsShare() {
            VERIFIER.verifyThat(PlacementConstraintProvider::fairShare).given(pending("a", Q, 0, 4000, place(N0, 0, 1, 2, 3))).penalizesBy(0);
        }
    }

    @Test
    void everyConstraintHasAWeightClass() {
        assertThat(PlacementConstraintProvider.HARD_CONSTRAINTS).hasSize(7);
        assertThat(PlacementConstraintProvider.MEDIUM_CONSTRAINTS).hasSize(3);
        assertThat(PlacementConstraintProvider.SOFT_CONSTRAINTS).hasSize(7);
    }

    @Test
    void weightOverridesRejectHardAndUnknownConstraints() {
        assertThatThrownBy(() -> SolverConfigs.weights(Map.of(PlacementConstraintProvider.GPU_CONFLICT, 5L)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is hard");
        assertThatThrownBy(() -> SolverConfigs.weights(Map.of("Nope", 5L))).hasMessageContaining("unknown constraint");
        assertThatThrownBy(() -> SolverConfigs.weights(Map.of(PlacementConstraintProvider.FRAGMENTATION, -1L))).hasMessageContaining(">= 0");
        assertThat(SolverConfigs.weights(Map.of(PlacementConstraintProvider.FRAGMENTATION, 3L, PlacementConstraintProvider.PREEMPTED_GPUS, 2L))
                .getConstraintWeight(PlacementConstraintProvider.FRAGMENTATION).softScore()).isEqualTo(3);
    }
}
