package dev.gantry.admission;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@code GET /v1/jobs/{id}/events} streams the job's state changes as Server-Sent Events until it ends. */
@QuarkusTest
class JobEventsStreamTest {

    @TestHTTPResource("/v1/jobs")
    URL jobs;

    @Test
    void followerSeesQueuedThenCancelledAndTheStreamEnds() throws Exception {
        String token = Tokens.of("alice", "vision");
        String id = given().auth().oauth2(token).contentType(ContentType.JSON).body(JobSubmissionTest.VALID_JOB)
                .when().post("/v1/jobs").then().statusCode(201).extract().path("id");

        HttpURLConnection connection = (HttpURLConnection) URI.create(jobs + "/" + id + "/events").toURL().openConnection();
        connection.setRequestProperty("Authorization", "Bearer " + token);
        connection.setRequestProperty("Accept", "text/event-stream");
        connection.setReadTimeout(15_000);
        assertThat(connection.getResponseCode()).isEqualTo(200);
        CompletableFuture<List<String>> events = CompletableFuture.supplyAsync(() -> {
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(connection.getInputStream(), StandardCharsets.UTF_8))) {
                return lines.lines().filter(line -> line.startsWith("data:")).toList();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        Thread.sleep(800);
        given().auth().oauth2(token).when().delete("/v1/jobs/" + id).then().statusCode(200);

        List<String> received = events.get(15, TimeUnit.SECONDS); // completes only when the server ends the stream
        assertThat(received).hasSize(2);
        assertThat(received.get(0)).contains("\"state\":\"QUEUED\"");
        assertThat(received.get(1)).contains("\"state\":\"CANCELLED\"");
    }
}
