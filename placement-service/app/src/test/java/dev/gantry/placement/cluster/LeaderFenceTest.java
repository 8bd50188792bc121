package dev.gantry.placement.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gantry.testing.TestDatabase;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.vertx.VertxContextSupport;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The fencing token survives a failed transaction. Found with BinderTest: the first binding
 * transaction of a term took the epoch inside itself; when it failed (a job cancelled under it) the
 * take was rolled back while the process kept the number, so its next check read an older epoch,
 * took itself for deposed and, without election, never bound again.
 */
@QuarkusTest
class LeaderFenceTest {

    @Inject
    LeaderFence fence;

    @Inject
    Leadership leadership;

    @Inject
    TestDatabase db;

    @AfterEach
    void endTerm() {
        leadership.set(false); // the term this test began: the next guarded transaction takes a new epoch
    }

    @Test
    void theFirstGuardedTransactionOfATermFailingLeavesTheProcessBinding() throws Throwable {
        leadership.set(true); // a new term: the fence holds no epoch until its next guarded transaction
        assertThat(fence.epoch()).isZero();
        long before = db.queryLong("select epoch from placement_leader where id = 1");

        assertThatThrownBy(() -> VertxContextSupport.subscribeAndAwait(() -> Panache.withTransaction(() -> fence.guard()
                .chain(() -> Uni.createFrom().failure(new IllegalStateException("the binding fails"))))))
                .hasMessageContaining("the binding fails");
        assertThat(fence.epoch()).as("the epoch taken").isEqualTo(before + 1);
        assertThat(db.queryLong("select epoch from placement_leader where id = 1")).as("the epoch kept in the database").isEqualTo(before + 1);

        VertxContextSupport.subscribeAndAwait(() -> Panache.withTransaction(fence::guard));
        assertThat(leadership.leading()).as("still binding").isTrue();
    }
}
