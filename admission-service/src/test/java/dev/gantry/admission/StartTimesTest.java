package dev.gantry.admission;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.admission.console.ConsoleServicesStub;
import dev.gantry.contracts.grpc.v1.GetJobRequest;
import dev.gantry.contracts.grpc.v1.Job;
import dev.gantry.contracts.grpc.v1.JobService;
import dev.gantry.contracts.grpc.v1.ListJobsRequest;
import io.grpc.Metadata;
import io.quarkus.grpc.GrpcClient;
import io.quarkus.grpc.GrpcClientUtils;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A waiting job's expected start (issue 20 item 3), as admission shows it: asked of placement
 * ({@code GET /v1/start-forecasts}, stubbed here; the real one: placement's StartForecastTest) when
 * the job is read, in REST's job view and list and gRPC's {@code Job}; unknown, with why, when
 * placement does not answer; none for a job that does not wait.
 */
@QuarkusTest
@QuarkusTestResource(value = ConsoleServicesStub.class, restrictToAnnotatedClass = true)
class StartTimesTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final String RUNNING_JOB = "6f1c0c1e-0000-4000-8000-0000000000aa";

    @GrpcClient("jobs")
    JobService jobs;

    @AfterEach
    void reset() {
        ConsoleServicesStub.startForecasts = ConsoleServicesStub.NO_FORECASTS;
        ConsoleServicesStub.placementDown = false;
    }

    private static String submit(String token, String name) {
        return given().auth().oauth2(token).contentType(ContentType.JSON)
                .body("""
                        {"name": "%s", "queue": "normal", "taskGroups": [{"name": "worker", "replicas": 1, "gpusPerReplica": 8}]}
                        """.formatted(name))
                .when().post("/v1/jobs").then().statusCode(201).extract().path("id");
    }

    private static void forecast(String job, String startAt, String basis, String note, String... waitsFor) {
        ConsoleServicesStub.startForecasts = """
                {"computedAt": "2026-12-07T10:00:00Z", "maxJobs": 500, "items": [
                  {"jobId": "%s", "startAt": %s, "basis": "%s", "waitsFor": [%s], "note": "%s", "futureField": 1}]}
                """.formatted(job, startAt == null ? "null" : "\"" + startAt + "\"", basis,
                String.join(", ", java.util.Arrays.stream(waitsFor).map(w -> "\"" + w + "\"").toList()), note);
    }

    private JobService as(String token) {
        Metadata headers = new Metadata();
        headers.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
        return GrpcClientUtils.attachHeaders(jobs, headers);
    }

    @Test
    void aWaitingJobShowsWhenItIsExpectedToStartAndWhy() {
        String token = Tokens.of("sam", "vision");
        String id = submit(token, "forecast-head");
        String ahead = submit(token, "forecast-ahead");
        forecast(id, "2026-12-07T10:16:40Z", "reservation", "reserved: after 1 job ends", ahead);

        JsonPath one = given().auth().oauth2(token).when().get("/v1/jobs/" + id).then().statusCode(200).extract().jsonPath();
        assertThat(one.getString("estimatedStartAt")).isEqualTo("2026-12-07T10:16:40Z");
        assertThat(one.getMap("startForecast")).isEqualTo(Map.of("basis", "reservation", "waitsFor", List.of(ahead),
                "note", "reserved: after 1 job ends"));
        assertThat(ConsoleServicesStub.FORECAST_QUERIES.getLast()).as("one job asked for by id").isEqualTo("job=" + id);

        JsonPath page = given().auth().oauth2(token).queryParam("limit", 500).when().get("/v1/jobs").then().statusCode(200)
                .extract().jsonPath();
        assertThat(page.getString("items.find { it.id == '" + id + "' }.estimatedStartAt")).isEqualTo("2026-12-07T10:16:40Z");
        assertThat(page.getString("items.find { it.id == '" + id + "' }.startForecast.basis")).isEqualTo("reservation");

        Job viaGrpc = as(token).get(GetJobRequest.newBuilder().setId(id).build()).await().atMost(WAIT);
        assertThat(viaGrpc.getEstimatedStartAt()).isEqualTo("2026-12-07T10:16:40Z");
        assertThat(viaGrpc.getStartForecast().getBasis()).isEqualTo("reservation");
        assertThat(viaGrpc.getStartForecast().getWaitsForList()).containsExactly(ahead);
        assertThat(viaGrpc.getStartForecast().getNote()).isEqualTo("reserved: after 1 job ends");
        Job listed = as(token).list(ListJobsRequest.newBuilder().setLimit(500).build()).await().atMost(WAIT).getJobsList().stream()
                .filter(j -> j.getId().equals(id)).findFirst().orElseThrow();
        assertThat(listed.getEstimatedStartAt()).isEqualTo("2026-12-07T10:16:40Z");
    }

    @Test
    void theJobsItWaitsForOfTeamsTheCallerCannotSeeAreOnlyCounted() {
        // placement names whoever's jobs must end first; a user learns only of those of its own teams
        String token = Tokens.of("sam", "vision");
        String id = submit(token, "forecast-behind-others");
        String own = submit(token, "forecast-own-ahead");
        String theirs = submit(Tokens.of("mallory", "speech"), "speech-ahead");
        forecast(id, "2026-12-07T11:00:00Z", "releases", "after 3 jobs end", own, theirs, RUNNING_JOB);

        JsonPath one = given().auth().oauth2(token).when().get("/v1/jobs/" + id).then().statusCode(200).extract().jsonPath();
        assertThat(one.getList("startForecast.waitsFor")).containsExactly(own);
        assertThat(one.getString("startForecast.note")).isEqualTo("after 3 jobs end (and 2 jobs you cannot see)");
        assertThat(one.getString("estimatedStartAt")).isEqualTo("2026-12-07T11:00:00Z");
        Job viaGrpc = as(token).get(GetJobRequest.newBuilder().setId(id).build()).await().atMost(WAIT);
        assertThat(viaGrpc.getStartForecast().getWaitsForList()).containsExactly(own);
        JsonPath page = given().auth().oauth2(token).queryParam("limit", 500).when().get("/v1/jobs").then().statusCode(200).extract().jsonPath();
        assertThat(page.getList("items.find { it.id == '" + id + "' }.startForecast.waitsFor")).containsExactly(own);
        assertThat(given().auth().oauth2(Tokens.admin()).when().get("/v1/jobs/" + id).then().statusCode(200).extract().jsonPath()
                .getList("startForecast.waitsFor")).as("an admin sees every job").containsExactly(own, theirs, RUNNING_JOB);
    }

    @Test
    void anUnknownStartSaysWhy() {
        String token = Tokens.of("sam", "vision");
        String id = submit(token, "forecast-unknown");
        forecast(id, null, "unknown", "unknown: not within the 168 h looked ahead");

        JsonPath one = given().auth().oauth2(token).when().get("/v1/jobs/" + id).then().statusCode(200).extract().jsonPath();
        assertThat(one.getString("estimatedStartAt")).isNull();
        assertThat(one.getString("startForecast.note")).isEqualTo("unknown: not within the 168 h looked ahead");
        Job viaGrpc = as(token).get(GetJobRequest.newBuilder().setId(id).build()).await().atMost(WAIT);
        assertThat(viaGrpc.hasEstimatedStartAt()).isFalse();
        assertThat(viaGrpc.getStartForecast().getBasis()).isEqualTo("unknown");

        ConsoleServicesStub.startForecasts = ConsoleServicesStub.NO_FORECASTS.replace("null", "\"2026-12-07T10:00:00Z\"");
        assertThat(given().auth().oauth2(token).when().get("/v1/jobs/" + id).then().statusCode(200).extract().path("startForecast.note")
                .toString()).startsWith("unknown: not forecast (more than 500 jobs ahead of it in line");

        ConsoleServicesStub.placementDown = true;
        JsonPath down = given().auth().oauth2(token).when().get("/v1/jobs/" + id).then().statusCode(200).extract().jsonPath();
        assertThat(down.getString("estimatedStartAt")).isNull();
        assertThat(down.getString("startForecast.basis")).isEqualTo("unknown");
        assertThat(down.getString("startForecast.note")).isEqualTo("unknown: placement-service did not answer");
        assertThat(down.getString("state")).as("the job is still served").isEqualTo("QUEUED");
    }

    @Test
    void aJobThatDoesNotWaitHasNoExpectedStart() {
        String token = Tokens.of("sam", "vision");
        String id = submit(token, "forecast-cancelled");
        forecast(id, "2026-12-07T10:16:40Z", "reservation", "reserved");
        given().auth().oauth2(token).when().delete("/v1/jobs/" + id).then().statusCode(200);

        JsonPath one = given().auth().oauth2(token).when().get("/v1/jobs/" + id).then().statusCode(200).extract().jsonPath();
        assertThat(one.getString("state")).isEqualTo("CANCELLED");
        assertThat(one.getString("estimatedStartAt")).isNull();
        assertThat(one.getString("startForecast")).isNull();
        assertThat(as(token).get(GetJobRequest.newBuilder().setId(id).build()).await().atMost(WAIT).hasStartForecast()).isFalse();
    }

    @Test
    void eachWatchUpdateOfAWaitingJobCarriesItsForecast() {
        String token = Tokens.of("sam", "vision");
        String id = submit(token, "forecast-watched");
        forecast(id, "2026-12-07T10:16:40Z", "reservation", "reserved: after 1 job ends", RUNNING_JOB);

        java.util.concurrent.CopyOnWriteArrayList<Job> updates = new java.util.concurrent.CopyOnWriteArrayList<>();
        var watch = as(token).watch(GetJobRequest.newBuilder().setId(id).build()).subscribe().with(updates::add);
        try {
            org.awaitility.Awaitility.await().atMost(WAIT).until(() -> !updates.isEmpty());
            Job first = updates.getFirst();
            assertThat(first.getState()).isEqualTo("QUEUED");
            assertThat(first.getEstimatedStartAt()).isEqualTo("2026-12-07T10:16:40Z");
            assertThat(first.getStartForecast().getBasis()).isEqualTo("reservation");
            assertThat(first.getStartForecast().getWaitsForList()).as("redacted as Get does: not a job the caller may see").isEmpty();
            assertThat(first.getStartForecast().getNote()).isEqualTo("reserved: after 1 job ends (and 1 job you cannot see)");

            given().auth().oauth2(token).when().delete("/v1/jobs/" + id).then().statusCode(200);
            org.awaitility.Awaitility.await().atMost(WAIT).until(() -> updates.getLast().getState().equals("CANCELLED"));
            assertThat(updates.getLast().hasStartForecast()).as("a job that no longer waits").isFalse();
            assertThat(updates.getLast().hasEstimatedStartAt()).isFalse();
        } finally {
            watch.cancel();
        }
    }

    @Test
    void aStaleForecastSaysWhyForAJobItDoesNotName() {
        String token = Tokens.of("sam", "vision");
        String id = submit(token, "forecast-stale");
        ConsoleServicesStub.startForecasts = """
                {"computedAt": "2026-12-07T10:00:00Z", "maxJobs": 500, "items": [], "stale": true,
                 "staleReason": "the last start-time forecast is of 2026-12-07T10:00:00Z, 61 s ago, older than 15 s (3 forecast periods): the leading placement replica has not forecast since"}
                """;
        JsonPath one = given().auth().oauth2(token).when().get("/v1/jobs/" + id).then().statusCode(200).extract().jsonPath();
        assertThat(one.getString("estimatedStartAt")).isNull();
        assertThat(one.getString("startForecast.basis")).isEqualTo("unknown");
        assertThat(one.getString("startForecast.note")).startsWith("unknown: the last start-time forecast is of 2026-12-07T10:00:00Z")
                .endsWith("the leading placement replica has not forecast since");
    }
}
