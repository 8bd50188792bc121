package dev.gantry.placement;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.startsWith;

import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestTokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** {@code POST /v1/plans}: a dry run over the engine, the same JSON as bin/gantry plan, nothing stored. */
@QuarkusTest
class PlanResourceTest {

    @Inject
    TestDatabase db;

    private static String scenario(String name) throws IOException {
        try (InputStream in = PlanResourceTest.class.getResourceAsStream("/scenarios/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void theSeedScenarioIsPlannedAndNothingIsStored() throws IOException {
        long allocations = db.queryLong("select count(*) from allocation");
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body(scenario("seed-volcano-example.json"))
                .when().post("/v1/plans?planner=timefold&profile=fast")
                .then().statusCode(200)
                .body("format", equalTo("gantry-plan/v1"))
                .body("scenario", equalTo("seed-volcano-example"))
                .body("placements.job", hasItem("tf-dist-train"));
        assertThat(db.queryLong("select count(*) from allocation")).isEqualTo(allocations);
    }

    @Test
    void invalidScenariosAndParametersAreProblems() throws IOException {
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{not json")
                .when().post("/v1/plans").then().statusCode(400)
                .contentType(startsWith("application/problem+json"));
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body(scenario("seed-volcano-example.json").replace("gantry-scenario/v1", "v0"))
                .when().post("/v1/plans").then().statusCode(422)
                .contentType(startsWith("application/problem+json"))
                .body("errors.field", hasItem("format"));
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body(scenario("seed-volcano-example.json"))
                .when().post("/v1/plans?planner=random").then().statusCode(400)
                .body("errors.field", hasItem("planner"));
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body(scenario("seed-volcano-example.json"))
                .when().post("/v1/plans?timeLimit=5min").then().statusCode(400)
                .body("errors.field", hasItem("timeLimit"));
    }
}
