package dev.gantry.quota;

import dev.gantry.testing.FreshTestConsumers;
import dev.gantry.testing.TestTokens;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.ResourceArg;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasItems;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;

import dev.gantry.testing.TestDatabase;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

/** Queues over REST against the real PostgreSQL. */
// every test of this module starts with fresh test consumers (global resource)
@QuarkusTestResource(value = FreshTestConsumers.class, initArgs = @ResourceArg(name = "service", value = "quota"))
@QuarkusTest
class QueueResourceTest {

    @Inject
    TestDatabase db;

    private static void put(String name, String body, int status) {
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body(body).when().put("/v1/queues/" + name).then().statusCode(status);
    }

    @Test
    void queueTreeIsStoredWithDefaultsAndReadBack() {
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"weight\": 2, \"guarantee\": {\"gpus\": 16, \"cpuMillis\": 128000, \"memoryMiB\": 1048576}}")
                .when().put("/v1/queues/research").then().statusCode(200)
                .body("capability.gpus", nullValue())
                .body("guarantee.cpuMillis", equalTo(128000))
                .body("reclaimable", equalTo(true))
                .body("state", equalTo("OPEN"));
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("""
                {"parent": "research", "guarantee": {"gpus": 8, "cpuMillis": 64000, "memoryMiB": 512000, "gpusByModel": {"A100-SXM4-80GB": 4}},
                 "capability": {"gpus": 16, "memoryMiB": 1048576}, "reclaimable": false,
                 "members": {"users": ["alice"], "teams": ["vision"]},
                 "limits": {"maxRunningGpus": 12, "maxGpusPerJob": 8, "maxPendingJobsPerUser": 5}}""")
                .when().put("/v1/queues/vision").then().statusCode(200);

        given().auth().oauth2(TestTokens.admin()).when().get("/v1/queues/vision").then().statusCode(200)
                .body("parent", equalTo("research"))
                .body("weight", equalTo(1))
                .body("capability.gpus", equalTo(16))
                .body("capability.cpuMillis", nullValue())
                .body("guarantee.gpusByModel.A100-SXM4-80GB", equalTo(4))
                .body("members.teams", hasItem("vision"))
                .body("members.empty", nullValue())
                .body("limits.maxRunningGpus", equalTo(12));
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/queues").then().statusCode(200).body("name", hasItems("research", "vision"));
        assertThat(db.queryLong("select guarantee_gpus from queue where name = 'research'")).isEqualTo(16);
        assertThat(db.queryLong("select guarantee_memory_mib from queue where name = 'vision'")).isEqualTo(512000);
    }

    @Test
    void invalidQueuesAreRefusedAndNothingIsStored() {
        put("tree-org", "{\"guarantee\": {\"gpus\": 8}, \"capability\": {\"gpus\": 16}}", 200);
        put("tree-a", "{\"parent\": \"tree-org\", \"guarantee\": {\"gpus\": 5}}", 200);
        long before = db.queryLong("select count(*) from queue");
        String beforeA = db.queryString("select guarantee_gpus || '/' || coalesce(parent, '-') from queue where name = 'tree-a'");

        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"weight\": 0}")
                .when().put("/v1/queues/zero-weight").then().statusCode(400)
                .contentType(startsWith("application/problem+json"))
                .body("errors.field", hasItem("weight"));
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"guarantee\": {\"gpus\": -1}}")
                .when().put("/v1/queues/negative").then().statusCode(400)
                .body("errors.field", hasItem("guarantee.gpus"));
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"guarantee\": {\"gpus\": 9}, \"capability\": {\"gpus\": 8}}")
                .when().put("/v1/queues/over-guaranteed").then().statusCode(422)
                .contentType(startsWith("application/problem+json"))
                .body("errors.field", hasItem("guarantee.gpus"));
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"guarantee\": {\"cpuMillis\": 9000}, \"capability\": {\"cpuMillis\": 8000}}")
                .when().put("/v1/queues/over-cpu").then().statusCode(422)
                .body("errors.field", hasItem("guarantee.cpuMillis"));
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"parent\": \"no-such-parent\"}")
                .when().put("/v1/queues/orphan").then().statusCode(422)
                .body("detail", equalTo("parent: no queue named no-such-parent"));
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{}")
                .when().put("/v1/queues/Bad_Name").then().statusCode(422)
                .body("errors.field", hasItem("name"));
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"weight\": \"heavy\"}")
                .when().put("/v1/queues/typo").then().statusCode(400)
                .contentType(startsWith("application/problem+json"));
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"state\": \"HALF_OPEN\"}")
                .when().put("/v1/queues/typo").then().statusCode(400);
        // children's guarantees must fit the parent's: 5 + 4 > 8
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"parent\": \"tree-org\", \"guarantee\": {\"gpus\": 4}}")
                .when().put("/v1/queues/tree-b").then().statusCode(422)
                .body("errors.field", hasItem("guarantee.gpus"))
                .body("detail", containsString("would add up to 9 GPUs, more than its guarantee of 8"));
        // nor may the parent's guarantee drop below them
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"guarantee\": {\"gpus\": 4}, \"capability\": {\"gpus\": 16}}")
                .when().put("/v1/queues/tree-org").then().statusCode(422)
                .body("detail", containsString("must cover the guarantees of its children"));
        // a child's capability stays within its parent's
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"parent\": \"tree-org\", \"capability\": {\"gpus\": 32}}")
                .when().put("/v1/queues/tree-c").then().statusCode(422)
                .body("errors.field", hasItem("capability.gpus"));
        // no cycles: tree-org under its own child
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"parent\": \"tree-a\", \"guarantee\": {\"gpus\": 8}, \"capability\": {\"gpus\": 16}}")
                .when().put("/v1/queues/tree-org").then().statusCode(422)
                .body("errors.field", hasItem("parent"))
                .body("detail", containsString("cannot be its own ancestor"));

        assertThat(db.queryLong("select count(*) from queue")).isEqualTo(before);
        assertThat(db.queryString("select guarantee_gpus || '/' || coalesce(parent, '-') from queue where name = 'tree-a'"))
                .isEqualTo(beforeA);
        assertThat(db.queryLong("select guarantee_gpus from queue where name = 'tree-org'")).isEqualTo(8);
    }

    @Test
    void queuesCanBeClosedAndLeavesDeleted() {
        put("del-org", "{}", 200);
        put("del-team", "{\"parent\": \"del-org\"}", 200);
        put("del-team", "{\"parent\": \"del-org\", \"state\": \"CLOSED\"}", 200);
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/queues/del-team").then().body("state", equalTo("CLOSED"));

        given().auth().oauth2(TestTokens.admin()).when().delete("/v1/queues/del-org").then().statusCode(422)
                .contentType(startsWith("application/problem+json"))
                .body("detail", equalTo("name: queue 'del-org' has child queues (del-team); delete or move them first"));
        given().auth().oauth2(TestTokens.admin()).when().delete("/v1/queues/del-team").then().statusCode(204);
        given().auth().oauth2(TestTokens.admin()).when().delete("/v1/queues/del-org").then().statusCode(204);
        given().auth().oauth2(TestTokens.admin()).when().delete("/v1/queues/del-org").then().statusCode(404).contentType(startsWith("application/problem+json"));
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/queues/del-org").then().statusCode(404);
    }
}
