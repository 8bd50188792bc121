package dev.gantry.quota.domain;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class AdmissionPolicyTest {

    private static final QueueSpec ORG = new QueueSpec("research", null, 1, null, ResourceLimits.ofGpus(64), true, null,
            new QueueSpec.Members(List.of(), List.of("research")), new QueueSpec.QueueLimits(null, null, 3));
    private static final QueueSpec TEAM = new QueueSpec("vision", "research", 1, null,
            new ResourceLimits(16, null, 256_000L, Map.of("A100", 8)), true, null, null, new QueueSpec.QueueLimits(12, 8, null));
    private static final QueueSpec CLOSED = new QueueSpec("old", "research", 1, null, null, true, QueueSpec.QueueState.CLOSED, null, null);
    private static final PriorityClassSpec HIGH = new PriorityClassSpec("high", 1000, null, false, null);
    private static final PriorityClassSpec NORMAL = new PriorityClassSpec("normal", 100, PriorityClassSpec.PreemptionPolicy.Never, true, null);

    private static AdmissionPolicy.Context context(Map<String, Long> running, Map<String, Long> pending, UserLimits user) {
        return new AdmissionPolicy.Context(new QueueTree(List.of(ORG, TEAM, CLOSED)), Map.of("high", HIGH, "normal", NORMAL),
                Optional.ofNullable(user), running, pending);
    }

    private static AdmissionPolicy.Request job(String queue, int gpus, String model, String priorityClass) {
        return new AdmissionPolicy.Request("alice", List.of("research"), queue, gpus, model, 8000, 64_000, priorityClass);
    }

    private static String reason(AdmissionPolicy.Decision d) {
        return d instanceof AdmissionPolicy.Rejected r ? r.rejection().reason() : "Allowed";
    }

    @Test
    void aJobThatFitsIsAllowedWithTheDefaultPriorityClass() {
        AdmissionPolicy.Decision d = AdmissionPolicy.check(job("vision", 4, "A100", null), context(Map.of(), Map.of(), null));
        assertThat(d).isInstanceOf(AdmissionPolicy.Allowed.class);
        assertThat(((AdmissionPolicy.Allowed) d).priorityClass()).isEqualTo(NORMAL);
    }

    @Test
    void eachRuleRejectsWithItsTypedReason() {
        var empty = context(Map.of(), Map.of(), null);
        assertThat(reason(AdmissionPolicy.check(job("nope", 1, null, null), empty))).isEqualTo("QueueNotFound");
        assertThat(reason(AdmissionPolicy.check(job("research", 1, null, null), empty))).isEqualTo("NotLeafQueue");
        assertThat(reason(AdmissionPolicy.check(job("old", 1, null, null), empty))).isEqualTo("QueueClosed");
        assertThat(reason(AdmissionPolicy.check(new AdmissionPolicy.Request("mallory", List.of("sales"), "vision", 1, null, 0, 0, null),
                empty))).isEqualTo("NotMember");
        assertThat(reason(AdmissionPolicy.check(job("vision", 1, null, "urgent"), empty))).isEqualTo("UnknownPriorityClass");
        assertThat(reason(AdmissionPolicy.check(job("vision", 10, null, null), empty))).isEqualTo("ExceedsJobLimit");
        assertThat(reason(AdmissionPolicy.check(job("vision", 2, null, null),
                context(Map.of(), Map.of(), new UserLimits("alice", 1, null))))).isEqualTo("ExceedsJobLimit");
        assertThat(reason(AdmissionPolicy.check(new AdmissionPolicy.Request("alice", List.of("research"), "vision", 1, null, 0, 512_000, null),
                empty))).isEqualTo("ExceedsQueueCapability");
        assertThat(reason(AdmissionPolicy.check(job("vision", 4, "A100", null), context(Map.of("vision", 10L), Map.of(), null))))
                .isEqualTo("ExceedsTeamLimit");
        assertThat(reason(AdmissionPolicy.check(job("vision", 1, null, null), context(Map.of(), Map.of("vision", 3L), null))))
                .isEqualTo("TooManyPendingJobs");
        assertThat(reason(AdmissionPolicy.check(job("vision", 1, null, null),
                context(Map.of(), Map.of("vision", 1L), new UserLimits("alice", null, 1))))).isEqualTo("TooManyPendingJobs");
    }

    @Test
    void messagesNameTheFacts() {
        var d = (AdmissionPolicy.Rejected) AdmissionPolicy.check(job("vision", 4, "A100", null), context(Map.of("vision", 10L), Map.of(), null));
        assertThat(d.rejection().message())
                .isEqualTo("queue 'vision' runs 10 GPUs and may run at most 12; the job's 4 GPUs would exceed that. Submit again when jobs finish");
        var notMember = (AdmissionPolicy.Rejected) AdmissionPolicy.check(
                new AdmissionPolicy.Request("mallory", List.of(), "vision", 1, null, 0, 0, null), context(Map.of(), Map.of(), null));
        assertThat(notMember.rejection().message())
                .isEqualTo("user 'mallory' is not a member of queue 'research', whose members may submit to 'vision'");
    }

    @Test
    void aQueueMayForbidMigratableJobsForItsSubtreeAndAChildMayAllowThemAgain() {
        QueueSpec org = new QueueSpec("prod", null, 1, null, null, true, null, null,
                new QueueSpec.QueueLimits(null, null, null, null, null, false));
        QueueSpec inherits = new QueueSpec("serving", "prod", 1, null, null, true, null, null, null);
        QueueSpec allows = new QueueSpec("batch", "prod", 1, null, null, true, null, null,
                new QueueSpec.QueueLimits(null, null, null, null, null, true));
        var ctx = new AdmissionPolicy.Context(new QueueTree(List.of(org, inherits, allows)), Map.of(), Optional.empty(), Map.of(), Map.of());
        AdmissionPolicy.Request migratable = new AdmissionPolicy.Request("alice", List.of(), "serving", 2, null, 0, 0, null, null, true);
        var refused = (AdmissionPolicy.Rejected) AdmissionPolicy.check(migratable, ctx);
        assertThat(refused.rejection().reason()).isEqualTo("MigrationNotAllowed");
        assertThat(refused.rejection().message()).isEqualTo(
                "queue 'prod' does not allow migratable jobs (it decides for 'serving'); submit without migratable");
        assertThat(AdmissionPolicy.check(new AdmissionPolicy.Request("alice", List.of(), "serving", 2, null, 0, 0, null, null, false), ctx))
                .as("the same job, not migratable").isInstanceOf(AdmissionPolicy.Allowed.class);
        assertThat(AdmissionPolicy.check(new AdmissionPolicy.Request("alice", List.of(), "batch", 2, null, 0, 0, null, null, true), ctx))
                .as("the nearest queue that says decides").isInstanceOf(AdmissionPolicy.Allowed.class);
        assertThat(AdmissionPolicy.check(job("vision", 1, null, null), context(Map.of(), Map.of(), null)))
                .as("no queue says: allowed").isInstanceOf(AdmissionPolicy.Allowed.class);
    }
}
