package dev.gantry.placement;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;

import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestTokens;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

/** Allocations are read back from the real database through the API. */
@QuarkusTest
class PlacementStateResourceTest {

    @Inject
    TestDatabase db;

    @Test
    void allocationsAreListedWithTheirGpuIndices() {
        db.execute("delete from allocation");
        db.execute("insert into allocation (job_id, task, node, gpu_indices, gpu_milli, allocated_at) "
                + "values ('6f1c0c1e-0000-4000-8000-000000000001', 'worker-0', 'dgx-01', '{2,3}', null, now())");
        given().auth().oauth2(TestTokens.user("alice", "vision")).when().get("/v1/allocations").then().statusCode(200)
                .body("$", hasSize(1))
                .body("[0].node", equalTo("dgx-01"))
                .body("[0].gpus", equalTo(java.util.List.of(2, 3)));
    }
}
