package dev.gantry.placement.engine.packing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.bench.ClusterGenerator;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Scenario;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The packer remembers each node's rank for a pod shape until the node changes; packing must come
 * out exactly as if every rank were worked out afresh.
 */
class RememberedRanksTest {

    @Test
    void greedyPacksTheSameWithAndWithoutRememberedRanks() {
        for (long seed = 1; seed <= 6; seed++) {
            Scenario sc = ClusterGenerator.generate("remembered-" + seed, 96, 192, 0.6, seed);
            GreedyPass.Result remembered = GreedyPass.run(sc, false, GangPacker.forWindow(sc));
            GreedyPass.Result afresh = GreedyPass.run(sc, false, GangPacker.forWindow(sc).withoutRememberedRanks());
            assertThat(remembered.fits()).as("seed %d: jobs placed", seed).hasSize(afresh.fits().size()).isNotEmpty();
            assertThat(describe(remembered.fits())).as("seed %d", seed).isEqualTo(describe(afresh.fits()));
        }
    }

    @Test
    void aNodeThatChangedIsRankedAgain() {
        Scenario sc = ClusterGenerator.generate("changed", 64, 128, 0.5, 7);
        ClusterState st = new ClusterState(sc); // nothing running: every node has GPUs to spare
        GangPacker packer = GangPacker.forWindow(sc);
        PendingJob job = sc.pending().stream().filter(p -> Replica.of(p).size() == 1 && p.gpuMilli() == 1000).findFirst().orElseThrow();
        List<Replica> reps = Replica.of(job);
        // candidates rank every node without taking anything: each node's rank is remembered as it stands
        GangPacker.GangFit first = packer.candidates(st, job, reps, 3).getFirst();
        // take every free GPU of that node but its last one: the pod still fits there (a tighter fit now),
        // on another GPU, and what was remembered for the node must not be used again
        GangPacker.Assigned a = first.tasks().getFirst();
        int[] free = ClusterState.indices(st.freeMask(a.node()));
        assertThat(free.length).as("the case this test is about: a node with GPUs to spare").isGreaterThan(1);
        st.take(a.node(), java.util.Arrays.copyOf(free, free.length - 1), null, 0, 0);
        GangPacker.GangFit again = packer.candidates(st, job, reps, 3).getFirst();
        GangPacker.GangFit fresh = GangPacker.forWindow(sc).withoutRememberedRanks().candidates(st, job, reps, 3).getFirst();
        assertThat(again.tasks().getFirst().node()).isEqualTo(fresh.tasks().getFirst().node());
        assertThat(again.tasks().getFirst().gpus()).isEqualTo(fresh.tasks().getFirst().gpus());
        for (int g : again.tasks().getFirst().gpus()) {
            assertThat(st.freeMask(again.tasks().getFirst().node()) & (1L << g)).as("GPU %d is free", g).isNotZero();
        }
    }

    @Test
    void everyChangeOfANodeIsCounted() {
        // what remembered ranks are checked against: a change the count misses would leave a stale rank in use
        Scenario sc = ClusterGenerator.generate("counted", 8, 8, 0.0, 3);
        ClusterState st = new ClusterState(sc);
        int before = st.changes(2);
        st.take(2, new int[] {0}, null, 1000, 1000);
        assertThat(st.changes(2)).isEqualTo(before + 1);
        st.release(2, new int[] {0}, null, 1000, 1000);
        assertThat(st.changes(2)).isEqualTo(before + 2);
        assertThat(st.changes(3)).as("another node").isEqualTo(0);
        st.preferFreeIn(st.copy()); // index choices may change on every node
        assertThat(st.changes(3)).isEqualTo(1);
    }

    private static List<String> describe(Map<String, GangPacker.GangFit> fits) {
        List<String> out = new ArrayList<>();
        fits.forEach((job, fit) -> fit.tasks().forEach(t -> out.add(job + "/" + t.replica().task() + "@" + t.node() + java.util.Arrays.toString(t.gpus()))));
        return out;
    }
}
