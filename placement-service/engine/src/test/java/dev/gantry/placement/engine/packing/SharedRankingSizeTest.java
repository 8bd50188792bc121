package dev.gantry.placement.engine.packing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.bench.ClusterGenerator;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Scenario;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Similar jobs share the nodes and domains their options are drawn from; in a large window there
 * must be enough of them for the jobs to aim at different ones.
 */
class SharedRankingSizeTest {

    @Test
    void aLargeWindowSpreadsSimilarJobsOverMoreNodes() {
        Scenario sc = ClusterGenerator.generate("ranking", 400, 800, 0.3, 11);
        PendingJob job = sc.pending().stream().filter(p -> Replica.of(p).size() == 1 && p.gpuMilli() == 1000).findFirst().orElseThrow();
        assertThat(nodesAimedAt(sc, job, 200)).as("a window of 200 jobs: the 24 best nodes").hasSizeLessThanOrEqualTo(24);
        assertThat(nodesAimedAt(sc, job, 4000)).as("a window of 4,000 jobs: 192 nodes").hasSizeGreaterThan(100);
    }

    @Test
    void similarGangsAimAtDifferentDomains() {
        Scenario sc = ClusterGenerator.generate("gangs", 400, 800, 0.3, 11);
        PendingJob gang = sc.pending().stream().filter(p -> Replica.of(p).size() > 1).findFirst().orElseThrow();
        ClusterState st = new ClusterState(sc);
        sc.running().forEach(st::occupy);
        GangPacker packer = GangPacker.forWindow(sc);
        packer.shareRankingsAmong(800);
        List<Replica> reps = Replica.of(gang);
        Set<String> leaves = new HashSet<>();
        String tightest = null;
        for (int rotation = 0; rotation < 20; rotation++) {
            List<GangPacker.GangFit> options = packer.candidates(st, gang, reps, 3, rotation);
            assertThat(options).as("options of gang %d", rotation).isNotEmpty();
            String first = sc.nodes().get(options.getFirst().tasks().getFirst().node()).topology().leaf();
            // every gang keeps the tightest domain as its first option
            assertThat(tightest == null || tightest.equals(first)).as("first option in the same leaf").isTrue();
            tightest = first;
            options.forEach(fit -> fit.tasks().forEach(t -> leaves.add(sc.nodes().get(t.node()).topology().leaf())));
        }
        assertThat(leaves).as("leaves the options of 20 similar gangs use").hasSizeGreaterThan(5);
    }

    /** The nodes 150 jobs of the job's shape get as options (3 each, rotated), the rankings sized for a window of {@code pending} jobs. */
    private static Set<Integer> nodesAimedAt(Scenario sc, PendingJob job, int pending) {
        ClusterState st = new ClusterState(sc);
        sc.running().forEach(st::occupy);
        GangPacker packer = GangPacker.forWindow(sc);
        packer.shareRankingsAmong(pending);
        List<Replica> reps = Replica.of(job);
        Set<Integer> nodes = new HashSet<>();
        for (int rotation = 0; rotation < 150; rotation++) {
            packer.candidates(st, job, reps, 3, rotation).forEach(fit -> nodes.add(fit.tasks().getFirst().node()));
        }
        return nodes;
    }
}
