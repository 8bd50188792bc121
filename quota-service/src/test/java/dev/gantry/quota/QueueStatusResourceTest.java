package dev.gantry.quota;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;

import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestTokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * GET /v1/queues/{name}/status on the seed's example, with demand written straight into the
 * tables the consumers fill (the event path is MessagingTest's). The test profile fixes the
 * cluster at 16 GPUs.
 */
@QuarkusTest
class QueueStatusResourceTest {

    @Inject
    TestDatabase db;

    private static void put(String name, String body) {
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body(body).when().put("/v1/queues/" + name).then().statusCode(200);
    }

    private void pending(UUID id, String queue, int gpus) {
        db.execute("insert into pending_job (job_id, queue, owner, gpus, cpu_millis, memory_mib, queued_at) values (?, ?, 'alice', ?, 0, 0, now())",
                id, queue, gpus);
    }

    @Test
    void seedExampleShowsEachNumberWithItsReason() {
        // urgent (weight 2, capability 8) and normal (weight 1, capability 16), both saturated on 16 GPUs:
        // urgent is capped at 8, normal takes the other 8 (see FairShareExamplesTest). normal runs 12, so 4 are borrowed.
        put("st-urgent", "{\"weight\": 2, \"capability\": {\"gpus\": 8}}");
        put("st-normal", "{\"weight\": 1, \"capability\": {\"gpus\": 16}, \"reclaimable\": true}");
        UUID u1 = UUID.randomUUID();
        UUID u2 = UUID.randomUUID();
        UUID n1 = UUID.randomUUID();
        UUID running = UUID.randomUUID();
        try {
            pending(u1, "st-urgent", 8);
            pending(u2, "st-urgent", 8);
            pending(n1, "st-normal", 8);
            db.execute("insert into allocation (job_id, queue, owner, gpus, gpu_model, cpu_millis, memory_mib, bound_at) "
                    + "values (?, 'st-normal', 'bob', 12, 'A100-SXM4-80GB', 96000, 512000, now())", running);

            given().auth().oauth2(TestTokens.admin()).when().get("/v1/queues/st-urgent/status").then().statusCode(200)
                    .body("deserved.gpus", equalTo(8.0f))
                    .body("deserved.reason", containsString("capped by its capability (8 GPUs, demand 16)"))
                    .body("pending.gpus", equalTo(16.0f))
                    .body("pending.reason", equalTo("16 GPUs asked for by 2 pending jobs (from jobs.* events)"))
                    .body("guarantee.gpus", equalTo(0.0f))
                    .body("guarantee.reason", containsString("no GPU guarantee set"))
                    .body("capability.gpus", equalTo(8.0f))
                    .body("capability.cpuMillis", nullValue())
                    .body("capacity.gpus", equalTo(16.0f))
                    .body("borrowed.gpus", equalTo(0.0f));

            given().auth().oauth2(TestTokens.admin()).when().get("/v1/queues/st-normal/status").then().statusCode(200)
                    .body("deserved.gpus", equalTo(8.0f))
                    .body("deserved.reason", containsString("the GPUs of the cluster are all shared out"))
                    .body("allocated.gpus", equalTo(12.0f))
                    .body("allocated.reason", equalTo("12 GPUs held by 1 running jobs (from placements.* events)"))
                    .body("allocatedGpusByModel.A100-SXM4-80GB", equalTo(12))
                    .body("borrowed.gpus", equalTo(4.0f))
                    .body("borrowed.reason", equalTo("holds 12 GPUs but deserves 8: 4 borrowed from queues that do not need them now; "
                            + "reclaimable, so they may be taken back (preempted) when other queues need their share"))
                    .body("pending.gpus", equalTo(8.0f))
                    .body("usage.factor", equalTo(1.0f))
                    .body("usage.reason", containsString("half-life 168 h"));

            // metrics: per-queue gauges and the computation timer
            String metrics = given().when().get("/q/metrics").then().statusCode(200).extract().asString();
            org.assertj.core.api.Assertions.assertThat(metrics)
                    .contains("gantry_quota_deserved_gpus{queue=\"st-urgent\"} 8.0")
                    .contains("gantry_quota_allocated_gpus{queue=\"st-normal\"} 12.0")
                    .contains("gantry_quota_pending_gpus{queue=\"st-urgent\"} 16.0")
                    .contains("gantry_quota_fairshare_computation_seconds_count");
        } finally {
            db.execute("delete from pending_job where job_id in (?, ?, ?)", u1, u2, n1);
            db.execute("delete from allocation where job_id = ?", running);
        }
    }

    @Test
    void aParentShowsItsSubtree() {
        put("st-org", "{\"guarantee\": {\"gpus\": 4}}");
        put("st-team", "{\"parent\": \"st-org\", \"guarantee\": {\"gpus\": 4}}");
        UUID p = UUID.randomUUID();
        try {
            pending(p, "st-team", 6);
            given().auth().oauth2(TestTokens.admin()).when().get("/v1/queues/st-org/status").then().statusCode(200)
                    .body("pending.gpus", equalTo(6.0f))
                    .body("pending.reason", equalTo("6 GPUs asked for by 1 pending jobs in 'st-org' and the queues below it (from jobs.* events)"))
                    .body("guarantee.reason", containsString("4 GPUs are its deserved minimum"));
            given().auth().oauth2(TestTokens.admin()).when().get("/v1/queues/st-team/status").then().statusCode(200)
                    .body("deserved.gpus", equalTo(6.0f))
                    .body("deserved.reason", containsString("4 guaranteed first"));
        } finally {
            db.execute("delete from pending_job where job_id = ?", p);
        }
    }

    @Test
    void openApiDescribesTheEndpoints() {
        given().accept("application/json").when().get("/q/openapi").then().statusCode(200)
                .body("paths.'/v1/admission-checks'.post", org.hamcrest.Matchers.notNullValue())
                .body("paths.'/v1/queues/{name}/status'.get", org.hamcrest.Matchers.notNullValue());
    }

    @Test
    void unknownQueueIsNotFound() {
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/queues/st-nowhere/status").then().statusCode(404)
                .contentType(startsWith("application/problem+json"));
    }
}
