package dev.gantry.quota.domain;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Priority is governed, not chosen (seen: {@code "priority": 2147483647} on a job without a class was
 * stored and scheduled as is on a fresh install). A job that names no priority gets its queue's
 * default; a number above what the queue allows is refused, naming the limit; a class may be kept to
 * some queues or teams.
 */
class PriorityGovernanceTest {

    private static final QueueSpec ORG = new QueueSpec("research", null, 1, null, null, true, null, null,
            new QueueSpec.QueueLimits(null, null, null, 50, null));
    private static final QueueSpec VISION = new QueueSpec("vision", "research", 1, null, null, true, null, null, null);
    private static final QueueSpec URGENT = new QueueSpec("urgent", null, 1, null, null, true, null, null,
            new QueueSpec.QueueLimits(null, null, null, 500, 800));
    private static final QueueSpec PLAIN = new QueueSpec("plain", null, 1, null, null, true, null, null, null);
    private static final PriorityClassSpec VIP = new PriorityClassSpec("vip", 900, null, false, null, List.of("urgent"), List.of("ops"));
    private static final PriorityClassSpec HIGH = new PriorityClassSpec("high", 700, null, false, null);

    private static AdmissionPolicy.Decision check(String queue, List<String> teams, String priorityClass, Integer priority,
            PriorityClassSpec... classes) {
        Map<String, PriorityClassSpec> byName = new java.util.HashMap<>();
        for (PriorityClassSpec c : classes) {
            byName.put(c.name(), c);
        }
        AdmissionPolicy.Context context = new AdmissionPolicy.Context(new QueueTree(List.of(ORG, VISION, URGENT, PLAIN)), byName,
                Optional.empty(), Map.of(), Map.of());
        return AdmissionPolicy.check(new AdmissionPolicy.Request("alice", teams, queue, 1, null, 0, 0, priorityClass, priority), context);
    }

    private static int allowed(AdmissionPolicy.Decision d) {
        assertThat(d).isInstanceOf(AdmissionPolicy.Allowed.class);
        return ((AdmissionPolicy.Allowed) d).priority();
    }

    private static Rejection rejected(AdmissionPolicy.Decision d) {
        assertThat(d).isInstanceOf(AdmissionPolicy.Rejected.class);
        return ((AdmissionPolicy.Rejected) d).rejection();
    }

    @Test
    void aJobThatNamesNoPriorityGetsItsQueuesDefault() {
        assertThat(allowed(check("vision", List.of(), null, null))).as("inherited from research").isEqualTo(50);
        assertThat(allowed(check("vision", List.of(), null, 0))).as("0 names none").isEqualTo(50);
        assertThat(allowed(check("urgent", List.of(), null, null))).isEqualTo(500);
        assertThat(allowed(check("plain", List.of(), null, null))).isZero();
        PriorityClassSpec byDefault = new PriorityClassSpec("normal", 100, null, true, null);
        assertThat(allowed(check("plain", List.of(), null, null, byDefault))).as("no queue default: the default class").isEqualTo(100);
    }

    @Test
    void aNumberAboveWhatTheQueueAllowsIsRefusedNamingTheLimit() {
        Rejection onAFreshInstall = rejected(check("plain", List.of(), null, 2_147_483_647));
        assertThat(onAFreshInstall.reason()).isEqualTo("PriorityAboveLimit");
        assertThat(onAFreshInstall.message()).contains("2147483647").contains("at most 0").contains("queue 'plain'");
        assertThat(rejected(check("vision", List.of(), null, 51)).message()).contains("at most 50");
        assertThat(allowed(check("vision", List.of(), null, 50))).isEqualTo(50);
        assertThat(allowed(check("plain", List.of(), null, -2_000))).as("lowering one's own priority is always allowed").isEqualTo(-2_000);
        assertThat(allowed(check("urgent", List.of(), null, 800))).isEqualTo(800);
        assertThat(rejected(check("urgent", List.of(), null, 801)).message()).contains("queue 'urgent' allows at most 800");
    }

    @Test
    void aClassAboveTheQueuesMaximumOrOutsideItsQueuesAndTeamsIsRefused() {
        assertThat(allowed(check("vision", List.of(), "high", null, HIGH))).as("no maximum on vision: the admin's class holds").isEqualTo(700);
        assertThat(allowed(check("urgent", List.of(), "high", null, HIGH))).isEqualTo(700);
        assertThat(rejected(check("urgent", List.of("ops"), "vip", null, VIP)).message())
                .contains("priority 900").contains("at most 800").contains("priority class 'vip'");
        assertThat(rejected(check("vision", List.of("ops"), "vip", null, VIP)).reason()).isEqualTo("PriorityClassNotAllowed");
        Rejection wrongTeam = rejected(check("urgent", List.of("vision"), "vip", null, VIP));
        assertThat(wrongTeam.reason()).isEqualTo("PriorityClassNotAllowed");
        assertThat(wrongTeam.message()).contains("in queues urgent").contains("by teams ops");
    }

    @Test
    void queueLimitsOnPriorityHaveBounds() {
        QueueSpec wild = new QueueSpec("wild", null, 1, null, null, true, null, null,
                new QueueSpec.QueueLimits(null, null, null, 2_000_000_000, 10));
        assertThat(wild.violations()).extracting(v -> v.field()).contains("limits.defaultPriority");
        assertThat(new PriorityClassSpec("low", -2_000_000_000, null, false, null).violations()).extracting(v -> v.field()).contains("value");
    }
}
