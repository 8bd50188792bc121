package dev.gantry.admission;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.gantry.admission.streams.JobBoard;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Live streams are capped per user (429 past the limit, the place freed when a stream closes), and
 * job watches share one read of the watched jobs per interval instead of polling once per stream.
 */
@QuarkusTest
class StreamLimitsTest {

    /** gantry.admission.streams.per-user, the default */
    private static final int LIMIT = 8;

    @TestHTTPResource("/v1/jobs")
    URL jobs;

    @Inject
    JobBoard board;

    private final List<HttpURLConnection> open = new ArrayList<>();

    @AfterEach
    void closeStreams() {
        open.forEach(HttpURLConnection::disconnect);
        open.clear();
    }

    @Test
    void aUserPastTheLimitGets429UntilOneOfTheirStreamsCloses() throws Exception {
        String carol = Tokens.of("carol", "vision");
        String id = submit(carol);
        for (int i = 0; i < LIMIT; i++) {
            assertThat(watch(carol, id).getResponseCode()).as("stream %d", i + 1).isEqualTo(200);
        }

        HttpURLConnection refused = watch(carol, id);
        assertThat(refused.getResponseCode()).isEqualTo(429);
        assertThat(refused.getContentType()).startsWith("application/problem+json");
        String problem = new String(refused.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(problem).contains("\"title\":\"Too Many Requests\"").contains("\"field\":\"streams\"").contains("8 live streams");

        // another user is not held back by carol's streams
        assertThat(watch(Tokens.of("dave", "vision"), id).getResponseCode()).isEqualTo(200);

        // closing one of carol's frees its place (the server notices the closed connection)
        open.getFirst().disconnect();
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(300)).until(() -> {
            HttpURLConnection again = watch(carol, id);
            return again.getResponseCode() == 200;
        });
    }

    @Test
    void manyWatchesShareOneReadPerInterval() throws Exception {
        String erin = Tokens.of("erin", "vision");
        for (int i = 0; i < 6; i++) {
            assertThat(watch(erin, submit(erin)).getResponseCode()).isEqualTo(200);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> board.watchedJobs() >= 6);
        long before = board.reads();
        Thread.sleep(3000);
        long reads = board.reads() - before;
        // one read per 500 ms interval for all six (a little slack for timing); one poll per stream would be ~36
        assertThat(reads).isBetween(1L, 10L);
    }

    private static String submit(String token) {
        return given().auth().oauth2(token).contentType(ContentType.JSON).body(JobSubmissionTest.VALID_JOB)
                .when().post("/v1/jobs").then().statusCode(201).extract().path("id");
    }

    private HttpURLConnection watch(String token, String id) throws IOException {
        HttpURLConnection connection = (HttpURLConnection) URI.create(jobs + "/" + id + "/events").toURL().openConnection();
        connection.setRequestProperty("Authorization", "Bearer " + token);
        connection.setRequestProperty("Accept", "text/event-stream");
        connection.setReadTimeout(15_000);
        open.add(connection);
        return connection;
    }
}
