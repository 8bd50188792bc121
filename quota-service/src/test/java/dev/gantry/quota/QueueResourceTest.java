package dev.gantry.quota;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;

import dev.gantry.testing.TestDatabase;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

/** Queues over REST against the real PostgreSQL. */
@QuarkusTest
class QueueResourceTest {

    @Inject
    TestDatabase db;

    @Test
    void queueTreeIsStoredWithDefaultsAndReadBack() {
        given().contentType(ContentType.JSON).body("{\"weight\": 2, \"guaranteeGpus\": 16}")
                .when().put("/v1/queues/research").then().statusCode(200)
                .body("capabilityGpus", nullValue())
                .body("reclaimable", equalTo(true))
                .body("state", equalTo("OPEN"));
        given().contentType(ContentType.JSON).body("{\"parent\": \"research\", \"capabilityGpus\": 8, \"reclaimable\": false}")
                .when().put("/v1/queues/vision").then().statusCode(200);

        given().when().get("/v1/queues/vision").then().statusCode(200)
                .body("parent", equalTo("research"))
                .body("weight", equalTo(1))
                .body("capabilityGpus", equalTo(8));
        given().when().get("/v1/queues").then().statusCode(200).body("name", hasItem("research"));
        assertThat(db.queryLong("select guarantee_gpus from queue where name = 'research'")).isEqualTo(16);
    }

    @Test
    void invalidQueuesAreRefusedAndNothingIsStored() {
        long before = db.queryLong("select count(*) from queue");
        given().contentType(ContentType.JSON).body("{\"weight\": 0}")
                .when().put("/v1/queues/zero-weight").then().statusCode(400)
                .contentType(startsWith("application/problem+json"))
                .body("errors.field", hasItem("weight"));
        given().contentType(ContentType.JSON).body("{\"guaranteeGpus\": 9, \"capabilityGpus\": 8}")
                .when().put("/v1/queues/over-guaranteed").then().statusCode(422)
                .contentType(startsWith("application/problem+json"))
                .body("errors.field", hasItem("guaranteeGpus"));
        given().contentType(ContentType.JSON).body("{\"parent\": \"no-such-parent\"}")
                .when().put("/v1/queues/orphan").then().statusCode(422)
                .body("detail", equalTo("parent: no queue named no-such-parent"));
        given().contentType(ContentType.JSON).body("{}")
                .when().put("/v1/queues/Bad_Name").then().statusCode(422)
                .body("errors.field", hasItem("name"));
        given().contentType(ContentType.JSON).body("{\"weight\": \"heavy\"}")
                .when().put("/v1/queues/typo").then().statusCode(400)
                .contentType(startsWith("application/problem+json"));
        assertThat(db.queryLong("select count(*) from queue")).isEqualTo(before);
    }
}
