package dev.gantry.quota.domain;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class QueueTreeTest {

    private static QueueSpec q(String name, String parent, int guarantee, Integer capability) {
        return QueueSpec.ofGpus(name, parent, 1, guarantee, capability);
    }

    @Test
    void aValidTreeHasNoViolations() {
        QueueTree tree = new QueueTree(List.of(q("root", null, 16, 32), q("research", "root", 10, 32), q("vision", "research", 6, 16),
                q("nlp", "research", 4, null)));
        assertThat(tree.violations(Set.of("root", "research", "vision", "nlp"))).isEmpty();
        assertThat(tree.pathToRoot("vision")).extracting(QueueSpec::name).containsExactly("vision", "research", "root");
        assertThat(tree.subtree("research")).containsExactlyInAnyOrder("research", "vision", "nlp");
        assertThat(tree.isLeaf("nlp")).isTrue();
    }

    @Test
    void aCycleIsRefused() {
        // research was under root; now root is moved under vision, which is under research
        QueueTree tree = new QueueTree(List.of(q("root", "vision", 0, null), q("research", "root", 0, null), q("vision", "research", 0, null)));
        assertThat(tree.violations(Set.of("root")))
                .extracting(QueueTree.Violation::field, QueueTree.Violation::message)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("parent",
                        "'vision' is below 'root' in the tree; a queue cannot be its own ancestor"));
    }

    @Test
    void aMissingParentIsRefused() {
        assertThat(new QueueTree(List.of(q("orphan", "nobody", 0, null))).violations(Set.of("orphan")))
                .extracting(QueueTree.Violation::message).containsExactly("no queue named nobody");
    }

    @Test
    void childrenGuaranteesMustFitTheParentsGuarantee() {
        QueueTree tree = new QueueTree(List.of(q("org", null, 8, null), q("a", "org", 5, null), q("b", "org", 4, null)));
        assertThat(tree.violations(Set.of("b"))).extracting(QueueTree.Violation::queue, QueueTree.Violation::field)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("b", "guarantee.gpus"));
        assertThat(tree.violations(Set.of("b")).getFirst().message())
                .isEqualTo("the guarantees of the children of 'org' would add up to 9 GPUs, more than its guarantee of 8");
        // lowering the parent's guarantee below its children's is refused on the parent
        assertThat(tree.violations(Set.of("org")).getFirst().message())
                .isEqualTo("must cover the guarantees of its children, which add up to 9 GPUs (is 8)");
    }

    @Test
    void aChildCapabilityMustStayWithinItsParents() {
        QueueTree tree = new QueueTree(List.of(q("org", null, 0, 8), q("team", "org", 0, 16)));
        assertThat(tree.violations(Set.of("team"))).extracting(QueueTree.Violation::field).containsExactly("capability.gpus");
    }

    @Test
    void singleQueueRulesAreIncluded() {
        QueueSpec bad = new QueueSpec("Bad_Name", null, 0, new ResourceAmounts(9, 0, 0, java.util.Map.of("A100", 10)),
                ResourceLimits.ofGpus(8), true, null, null, null);
        assertThat(new QueueTree(List.of(bad)).violations(Set.of("Bad_Name"))).extracting(QueueTree.Violation::field)
                .contains("name", "weight", "guarantee.gpus", "guarantee.gpusByModel");
    }
}
