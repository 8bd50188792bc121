package dev.gantry.admission;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.startsWith;

import com.sun.net.httpserver.HttpServer;
import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.placements.PodGangDissolved;
import dev.gantry.contracts.placements.PodGangFormed;
import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestNats;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Gangs users form from their own Kubernetes pods go through admission as API jobs do (issue 19,
 * item 5): placement only reports a gang ({@code placements.gang-formed}); admission charges it to
 * the team an admin mapped the namespace to, asks quota, and queues it or refuses it. Before, the
 * pods' own labels chose queue and priority and no check ran.
 */
@QuarkusTest
@TestProfile(PodGangAdmissionTest.RealQuotaCheck.class)
class PodGangAdmissionTest {

    private static final int PORT = 18097;
    /** The admission checks quota was asked, as JSON bodies. */
    private static final List<String> checks = new CopyOnWriteArrayList<>();
    private static HttpServer quota;

    public static class RealQuotaCheck implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("gantry.admission.quota-check.enabled", "true",
                    "quarkus.rest-client.quota.url", "http://127.0.0.1:" + PORT);
        }
    }

    /** Stands in for quota-service: queue "full" is refused (maxPendingJobs), every other check allowed at priority 250. */
    @BeforeAll
    static void startQuota() {
        try {
            quota = HttpServer.create(new InetSocketAddress("127.0.0.1", PORT), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        quota.createContext("/v1/admission-checks", new QuotaStandIn(body -> {
            checks.add(body);
            boolean full = body.contains("\"queue\":\"full\"");
            return new QuotaStandIn.Answer(200, full
                    ? "{\"allowed\":false,\"reason\":\"max-pending-jobs\",\"message\":\"queue full has 10 pending jobs, its limit\",\"priority\":null}"
                    : "{\"allowed\":true,\"reason\":null,\"message\":\"ok\",\"priority\":250}");
        }));
        quota.start();
    }

    @AfterAll
    static void stopQuota() {
        quota.stop(0);
    }

    @ConfigProperty(name = "gantry.nats.url")
    String natsUrl;

    @Inject
    TestDatabase db;

    private static String namespace() {
        return "ml-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static PodGangFormed gang(UUID jobId, String namespace, String queue, int priority) {
        JobQueued pods = new JobQueued(jobId, "ddp-run", queue, null, priority, Instant.parse("2026-12-06T04:00:00Z"), 2,
                List.of(new JobQueued.TaskGroup("pod", 2, 4, null, 8000, 64_000, null, null)), null, null, null, false, Map.of(),
                List.of(), true, false, null);
        return new PodGangFormed(jobId, namespace, "ddp-run", pods, Instant.now());
    }

    private void publish(EventEnvelope<?>... events) throws Exception {
        try (TestNats nats = TestNats.connect(natsUrl)) {
            for (EventEnvelope<?> e : events) {
                nats.publish(e);
            }
        }
    }

    private static EventEnvelope<PodGangFormed> formed(PodGangFormed gang) {
        return EventEnvelope.of(Subjects.PLACEMENTS_GANG_FORMED, gang.jobId().toString(), gang);
    }

    private long outbox(String subject, UUID jobId) {
        return db.queryLong("select count(*) from outbox_event where subject = ? and subject_id = ?", subject, jobId.toString());
    }

    private void mapNamespace(String namespace, String team) {
        given().auth().oauth2(Tokens.admin()).contentType(ContentType.JSON).body("{\"team\":\"" + team + "\"}")
                .when().put("/v1/namespaces/" + namespace).then().statusCode(201);
    }

    @Test
    void onlyAnAdminMapsANamespaceAndBadInputChangesNothing() {
        String ns = namespace();
        given().contentType(ContentType.JSON).body("{\"team\":\"vision\"}").when().put("/v1/namespaces/" + ns)
                .then().statusCode(401).contentType(startsWith("application/problem+json"));
        given().auth().oauth2(Tokens.of("mallory", "vision")).contentType(ContentType.JSON).body("{\"team\":\"vision\"}")
                .when().put("/v1/namespaces/" + ns).then().statusCode(403).contentType(startsWith("application/problem+json"));
        given().auth().oauth2(Tokens.of("mallory", "admin")).contentType(ContentType.JSON).body("{\"team\":\"vision\"}")
                .when().put("/v1/namespaces/" + ns).then().statusCode(403); // a group named admin is no admin
        given().auth().oauth2(Tokens.admin()).contentType(ContentType.JSON).body("{\"team\":\"vision\"}")
                .when().put("/v1/namespaces/Not_A_Namespace").then().statusCode(400).contentType(startsWith("application/problem+json"));
        given().auth().oauth2(Tokens.admin()).contentType(ContentType.JSON).body("{\"team\":\"\"}")
                .when().put("/v1/namespaces/" + ns).then().statusCode(400).contentType(startsWith("application/problem+json"));
        assertThat(db.queryLong("select count(*) from namespace_team where namespace = ?", ns)).isZero();
        given().auth().oauth2(Tokens.of("mallory", "vision")).when().get("/v1/namespaces").then().statusCode(403);

        mapNamespace(ns, "vision");
        given().auth().oauth2(Tokens.admin()).when().get("/v1/namespaces/" + ns).then().statusCode(200).body("team", equalTo("vision"));
        given().auth().oauth2(Tokens.admin()).contentType(ContentType.JSON).body("{\"team\":\"nlp\"}")
                .when().put("/v1/namespaces/" + ns).then().statusCode(200).body("team", equalTo("nlp"));
        given().auth().oauth2(Tokens.of("mallory", "vision")).when().delete("/v1/namespaces/" + ns).then().statusCode(403);
        given().auth().oauth2(Tokens.admin()).when().delete("/v1/namespaces/" + ns).then().statusCode(204);
        given().auth().oauth2(Tokens.admin()).when().get("/v1/namespaces/" + ns).then().statusCode(404)
                .contentType(startsWith("application/problem+json"));
    }

    @Test
    void aGangInANamespaceMappedToNoTeamIsRefusedAndNothingIsQueued() throws Exception {
        UUID jobId = UUID.randomUUID();
        publish(formed(gang(jobId, namespace(), "normal", 0)));
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.JOBS_REFUSED, jobId) == 1);
        assertThat(db.queryString("select envelope from outbox_event where subject = ? and subject_id = ?", Subjects.JOBS_REFUSED,
                jobId.toString())).contains("is mapped to no Gantry team");
        assertThat(db.queryLong("select count(*) from job where id = ?::uuid", jobId.toString())).isZero();
        assertThat(outbox(Subjects.JOBS_QUEUED, jobId)).isZero();
    }

    @Test
    void aGangInAMappedNamespaceIsQueuedForItsTeamAfterQuotaSaysYesAndOnlyOnce() throws Exception {
        String ns = namespace();
        mapNamespace(ns, "vision");
        UUID jobId = UUID.randomUUID();
        // the pods' label asks for priority 999999999: quota's verdict (the queue's governed priority) decides
        EventEnvelope<PodGangFormed> event = formed(gang(jobId, ns, "normal", 999_999_999));
        publish(event, event, formed(gang(jobId, ns, "normal", 0)));
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.JOBS_QUEUED, jobId) == 1);
        assertThat(db.queryString("select team || ' ' || owner || ' ' || state || ' ' || priority from job where id = ?::uuid",
                jobId.toString())).isEqualTo("vision system:pod-gang:" + ns + " QUEUED 250");
        assertThat(checks).anySatisfy(check -> assertThat(check).contains("\"user\":\"system:pod-gang:" + ns + "\"")
                .contains("\"team\":\"vision\"").contains("\"queue\":\"normal\"").contains("999999999"));
        Thread.sleep(1000); // the duplicates had their chance
        assertThat(outbox(Subjects.JOBS_QUEUED, jobId)).as("admitted once").isEqualTo(1);
        assertThat(db.queryLong("select count(*) from job where id = ?::uuid", jobId.toString())).isEqualTo(1);
        // the team's members see it as any job of theirs
        given().auth().oauth2(Tokens.of("vera", "vision")).when().get("/v1/jobs/" + jobId).then().statusCode(200)
                .body("state", equalTo("QUEUED"));
        given().auth().oauth2(Tokens.of("nick", "nlp")).when().get("/v1/jobs/" + jobId).then().statusCode(404);

        // its pods fell below the minimum before it was placed: withdrawn
        publish(EventEnvelope.of(Subjects.PLACEMENTS_GANG_DISSOLVED, jobId.toString(),
                new PodGangDissolved(jobId, ns, "ddp-run", "1 of 2 pods left", Instant.now())));
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.JOBS_CANCELLED, jobId) == 1);
        assertThat(db.queryString("select state from job where id = ?::uuid", jobId.toString())).isEqualTo("CANCELLED");
    }

    @Test
    void aGangQuotaRefusesIsNotStored() throws Exception {
        String ns = namespace();
        mapNamespace(ns, "vision");
        UUID jobId = UUID.randomUUID();
        publish(formed(gang(jobId, ns, "full", 0)));
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.JOBS_REFUSED, jobId) == 1);
        assertThat(db.queryString("select envelope from outbox_event where subject = ? and subject_id = ?", Subjects.JOBS_REFUSED,
                jobId.toString())).contains("queue full has 10 pending jobs");
        assertThat(db.queryLong("select count(*) from job where id = ?::uuid", jobId.toString())).isZero();
    }

    @Test
    void aGangWithInvalidShapeIsRefusedBeforeQuotaIsAsked() throws Exception {
        String ns = namespace();
        mapNamespace(ns, "vision");
        UUID jobId = UUID.randomUUID();
        PodGangFormed bad = gang(jobId, ns, "normal", 0);
        JobQueued tooBig = new JobQueued(jobId, "ddp-run", "normal", null, 0, Instant.now(), 2,
                List.of(new JobQueued.TaskGroup("pod", 2, 4, null, 4_611_686_018_427_387_904L, 64_000, null, null)), null, null, null,
                false, Map.of(), List.of(), true, false, null);
        int asked = checks.size();
        publish(formed(new PodGangFormed(jobId, ns, bad.gang(), tooBig, Instant.now())));
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.JOBS_REFUSED, jobId) == 1);
        assertThat(db.queryString("select envelope from outbox_event where subject = ? and subject_id = ?", Subjects.JOBS_REFUSED,
                jobId.toString())).contains("cpuMillis");
        assertThat(checks.size()).isEqualTo(asked);
    }

    @Test
    void aGangDissolvedBeforeItsFormationArrivesIsNeverAdmitted() throws Exception {
        String ns = namespace();
        mapNamespace(ns, "vision");
        UUID jobId = UUID.randomUUID();
        publish(EventEnvelope.of(Subjects.PLACEMENTS_GANG_DISSOLVED, jobId.toString(),
                new PodGangDissolved(jobId, ns, "ddp-run", "pods deleted", Instant.now())));
        await().atMost(Duration.ofSeconds(20)).until(() ->
                db.queryLong("select count(*) from dissolved_pod_gang where job_id = ?::uuid", jobId.toString()) == 1);
        publish(formed(gang(jobId, ns, "normal", 0))); // redelivered late, after the dissolution
        Thread.sleep(1500);
        assertThat(db.queryLong("select count(*) from job where id = ?::uuid", jobId.toString())).isZero();
        assertThat(outbox(Subjects.JOBS_QUEUED, jobId)).isZero();
    }
}
