package dev.gantry.placement;

import dev.gantry.testing.TestDatabase;

/**
 * The disruption budget counts the moves started within the last hour in {@code job_migration}
 * (six for the cluster, three per queue). The database is cleaned when Quarkus starts, but test
 * classes of one profile share a start: the moves of {@code MigrationTest},
 * {@code AgentMigrationTest} and the consolidation tests all fall in one hour, so the class that
 * ran last could find the hour spent and its moves refused. A test that needs moves starts from an
 * hour in which nothing moved.
 */
public final class DisruptionBudgetReset {

    private DisruptionBudgetReset() {
    }

    /** Forgets every recorded move; call before a test, when no move is in flight. */
    public static void forgetEarlierMoves(TestDatabase db) {
        db.execute("delete from job_migration");
    }
}
