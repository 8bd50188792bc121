package dev.gantry.quota;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.startsWith;

import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestTokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

@QuarkusTest
class PriorityClassAndUserLimitResourceTest {

    @Inject
    TestDatabase db;

    @Test
    void priorityClassesAreStoredListedAndDeleted() {
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"value\": 1000, \"description\": \"production training\"}")
                .when().put("/v1/priority-classes/pc-high").then().statusCode(200)
                .body("preemptionPolicy", equalTo("PreemptLowerPriority"))
                .body("globalDefault", equalTo(false));
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"value\": 10, \"preemptionPolicy\": \"Never\"}")
                .when().put("/v1/priority-classes/pc-low").then().statusCode(200);
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/priority-classes/pc-low").then().statusCode(200).body("preemptionPolicy", equalTo("Never"));
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/priority-classes").then().statusCode(200).body("name", hasItem("pc-high"));
        given().auth().oauth2(TestTokens.admin()).when().delete("/v1/priority-classes/pc-low").then().statusCode(204);
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/priority-classes/pc-low").then().statusCode(404).contentType(startsWith("application/problem+json"));
        given().auth().oauth2(TestTokens.admin()).when().delete("/v1/priority-classes/pc-low").then().statusCode(404);
    }

    @Test
    void invalidPriorityClassesAreRefusedAndNothingIsStored() {
        long before = db.queryLong("select count(*) from priority_class");
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{}")
                .when().put("/v1/priority-classes/pc-novalue").then().statusCode(400)
                .contentType(startsWith("application/problem+json"))
                .body("errors.field", hasItem("value"));
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"value\": 1, \"preemptionPolicy\": \"Sometimes\"}")
                .when().put("/v1/priority-classes/pc-policy").then().statusCode(400);
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"value\": 2000000000}")
                .when().put("/v1/priority-classes/pc-system").then().statusCode(422)
                .body("errors.field", hasItem("value"));
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"value\": 1}")
                .when().put("/v1/priority-classes/Not_A_Name").then().statusCode(422)
                .body("errors.field", hasItem("name"));
        assertThat(db.queryLong("select count(*) from priority_class")).isEqualTo(before);
    }

    @Test
    void onlyOneDefaultPriorityClass() {
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"value\": 100, \"globalDefault\": true}")
                .when().put("/v1/priority-classes/pc-default").then().statusCode(200);
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"value\": 200, \"globalDefault\": true}")
                .when().put("/v1/priority-classes/pc-second-default").then().statusCode(422)
                .body("detail", equalTo("globalDefault: 'pc-default' is already the default priority class"));
        // the default itself may be updated
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"value\": 150, \"globalDefault\": true}")
                .when().put("/v1/priority-classes/pc-default").then().statusCode(200);
        assertThat(db.queryLong("select count(*) from priority_class where global_default")).isEqualTo(1);
        given().auth().oauth2(TestTokens.admin()).when().delete("/v1/priority-classes/pc-default").then().statusCode(204);
    }

    @Test
    void userLimitsAreStoredReadAndDeleted() {
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"maxGpusPerJob\": 8, \"maxPendingJobs\": 20}")
                .when().put("/v1/user-limits/bob").then().statusCode(200).body("user", equalTo("bob"));
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/user-limits/bob").then().statusCode(200).body("maxGpusPerJob", equalTo(8));
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/user-limits").then().statusCode(200).body("user", hasItem("bob"));
        long before = db.queryLong("select count(*) from user_limit");
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"maxGpusPerJob\": -1}")
                .when().put("/v1/user-limits/carol").then().statusCode(400)
                .contentType(startsWith("application/problem+json"))
                .body("errors.field", hasItem("maxGpusPerJob"));
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"maxPendingJobs\": \"many\"}")
                .when().put("/v1/user-limits/carol").then().statusCode(400)
                .body("detail", containsString("not valid JSON"));
        assertThat(db.queryLong("select count(*) from user_limit")).isEqualTo(before);
        given().auth().oauth2(TestTokens.admin()).when().delete("/v1/user-limits/bob").then().statusCode(204);
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/user-limits/bob").then().statusCode(404);
    }
}
