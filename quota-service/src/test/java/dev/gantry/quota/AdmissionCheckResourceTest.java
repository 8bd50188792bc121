package dev.gantry.quota;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;

import dev.gantry.quota.service.AdmissionContexts;
import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestTokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.ValidatableResponse;
import jakarta.inject.Inject;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** POST /v1/admission-checks: 200 with allowed true/false and a typed reason; 400 only for malformed questions. */
@QuarkusTest
class AdmissionCheckResourceTest {

    @Inject
    TestDatabase db;

    @Inject
    AdmissionContexts contexts;

    @BeforeEach
    void queues() {
        put("/v1/queues/adm-org", "{\"members\": {\"teams\": [\"ml\"], \"users\": [\"root-admin\"]}, \"capability\": {\"gpus\": 64}}");
        put("/v1/queues/adm-team", """
                {"parent": "adm-org", "capability": {"gpus": 16, "cpuMillis": 128000, "gpusByModel": {"H100": 4}},
                 "limits": {"maxRunningGpus": 10, "maxGpusPerJob": 8, "maxPendingJobsPerUser": 2}}""");
        put("/v1/queues/adm-closed", "{\"parent\": \"adm-org\", \"state\": \"CLOSED\"}");
        put("/v1/priority-classes/adm-prio", "{\"value\": 500, \"preemptionPolicy\": \"Never\"}");
    }

    private static void put(String path, String body) {
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body(body).when().put(path).then().statusCode(200);
    }

    private static ValidatableResponse check(String body) {
        return given().auth().oauth2(TestTokens.service()).contentType(ContentType.JSON).body(body).when().post("/v1/admission-checks").then();
    }

    private static String job(String user, String team, String queue, int gpus, String extra) {
        return "{\"user\": \"" + user + "\", \"team\": \"" + team + "\", \"queue\": \"" + queue + "\", \"resources\": {\"gpus\": " + gpus
                + ", \"cpuMillis\": 8000, \"memoryMiB\": 32000" + extra + "}}";
    }

    private static void rejected(String body, String reason, String message) {
        check(body).statusCode(200).body("allowed", equalTo(false)).body("reason", equalTo(reason)).body("message", equalTo(message));
    }

    @Test
    void aJobThatFitsIsAllowed() {
        check(job("alice", "ml", "adm-team", 4, "")).statusCode(200)
                .body("allowed", equalTo(true))
                .body("reason", nullValue());
        check("{\"user\": \"alice\", \"teams\": [\"other\", \"ml\"], \"queue\": \"adm-team\", \"priorityClass\": \"adm-prio\","
                + " \"resources\": {\"gpus\": 2, \"gpuModel\": \"H100\"}}").statusCode(200)
                .body("allowed", equalTo(true))
                .body("priorityClass", equalTo("adm-prio"))
                .body("priority", equalTo(500))
                .body("preemptionPolicy", equalTo("Never"));
        // members named as users pass without a team
        check("{\"user\": \"root-admin\", \"queue\": \"adm-team\", \"resources\": {\"gpus\": 1}}").body("allowed", equalTo(true));
    }

    /**
     * Admission sends the checks of concurrent submissions together (issue 18: one HTTP exchange per
     * job was the largest part of a submission's cost). Each is answered in its place as alone; a
     * malformed one gets 400 in its place and the others their answers; reservations count in order.
     */
    @Test
    void aBatchIsAnsweredCheckByCheckInOrderAndAMalformedCheckSpoilsNothingElse() {
        String user = "adm-batch-" + UUID.randomUUID().toString().substring(0, 6);
        String reserve = ", \"jobId\": \"%s\"";
        String body = "{\"checks\": ["
                + job(user, "ml", "adm-team", 1, "").replace("}}", "}" + reserve.formatted(UUID.randomUUID()) + "}") + ","
                + job(user, "ml", "adm-team", 9, "") + ","
                + "{\"user\": \"\", \"queue\": \"adm-team\", \"resources\": {\"gpus\": 1}},"
                + job(user, "ml", "adm-closed", 1, "") + ","
                + job(user, "ml", "adm-team", 1, "").replace("}}", "}" + reserve.formatted(UUID.randomUUID()) + "}") + ","
                + job(user, "ml", "adm-team", 1, "").replace("}}", "}" + reserve.formatted(UUID.randomUUID()) + "}")
                + "]}";
        given().auth().oauth2(TestTokens.service()).contentType(ContentType.JSON).body(body)
                .when().post("/v1/admission-checks/batch").then().statusCode(200)
                .body("results.size()", equalTo(6))
                .body("results[0].status", equalTo(200)).body("results[0].answer.allowed", equalTo(true))
                .body("results[1].answer.allowed", equalTo(false)).body("results[1].answer.reason", equalTo("ExceedsJobLimit"))
                .body("results[2].status", equalTo(400)).body("results[2].detail", startsWith("user: "))
                .body("results[3].answer.reason", equalTo("QueueClosed"))
                .body("results[4].answer.allowed", equalTo(true))
                // the queue allows 2 pending jobs a user: the first and fifth checks reserved them
                .body("results[5].answer.allowed", equalTo(false)).body("results[5].answer.reason", equalTo("TooManyPendingJobs"));
        assertThat(db.queryLong("select count(*) from admission_reservation where owner = ?", user)).as("the two reservations").isEqualTo(2);

        given().auth().oauth2(TestTokens.service()).contentType(ContentType.JSON).body("{\"checks\": []}")
                .when().post("/v1/admission-checks/batch").then().statusCode(400);
        given().contentType(ContentType.JSON).body(body).when().post("/v1/admission-checks/batch").then().statusCode(401);
        db.execute("delete from admission_reservation where owner = ?", user);
    }

    /**
     * A batch is decided in one transaction (issue 18 item 6): each user's count is their own, a job
     * checked twice in one batch (a retry) takes one place, and what is stored before the batch counts.
     */
    @Test
    void aBatchCountsEachUsersPlacesOnceAndWhatWasPendingBefore() {
        String ann = "adm-b1-" + UUID.randomUUID().toString().substring(0, 6);
        String ben = "adm-b2-" + UUID.randomUUID().toString().substring(0, 6);
        UUID earlier = UUID.randomUUID();
        UUID retried = UUID.randomUUID();
        db.execute("insert into pending_job (job_id, queue, owner, gpus, cpu_millis, memory_mib, queued_at) values (?, 'adm-team', ?, 1, 0, 0, now())",
                earlier, ben);
        try {
            String reserve = ", \"jobId\": \"%s\"";
            String body = "{\"checks\": ["
                    + job(ann, "ml", "adm-team", 1, "").replace("}}", "}" + reserve.formatted(retried) + "}") + ","
                    + job(ben, "ml", "adm-team", 1, "").replace("}}", "}" + reserve.formatted(UUID.randomUUID()) + "}") + ","
                    + job(ann, "ml", "adm-team", 1, "").replace("}}", "}" + reserve.formatted(retried) + "}") + ","
                    + job(ben, "ml", "adm-team", 1, "").replace("}}", "}" + reserve.formatted(UUID.randomUUID()) + "}") + ","
                    + job(ann, "ml", "adm-team", 1, "").replace("}}", "}" + reserve.formatted(UUID.randomUUID()) + "}") + ","
                    + job(ann, "ml", "adm-team", 1, "").replace("}}", "}" + reserve.formatted(UUID.randomUUID()) + "}")
                    + "]}";
            given().auth().oauth2(TestTokens.service()).contentType(ContentType.JSON).body(body)
                    .when().post("/v1/admission-checks/batch").then().statusCode(200)
                    .body("results.answer.allowed", equalTo(java.util.List.of(true, true, true, false, true, false)))
                    .body("results[3].answer.reason", equalTo("TooManyPendingJobs"))
                    .body("results[5].answer.reason", equalTo("TooManyPendingJobs"));
            assertThat(db.queryLong("select count(*) from admission_reservation where owner = ?", ann)).as("ann: the retried job once").isEqualTo(2);
            assertThat(db.queryLong("select count(*) from admission_reservation where owner = ?", ben)).as("ben: one beside the stored one").isEqualTo(1);
        } finally {
            db.execute("delete from admission_reservation where owner in (?, ?)", ann, ben);
            db.execute("delete from pending_job where job_id = ?", earlier);
        }
    }

    @Test
    void priorityIsTheQueuesUnlessTheQueueLetsTheJobAskForMore() {
        put("/v1/queues/adm-prio-team", "{\"parent\": \"adm-org\", \"limits\": {\"defaultPriority\": 40, \"maxPriority\": 300}}");
        String base = "{\"user\": \"alice\", \"team\": \"ml\", \"queue\": \"adm-prio-team\", \"resources\": {\"gpus\": 1}";
        check(base + "}").statusCode(200).body("allowed", equalTo(true)).body("priority", equalTo(40));
        check(base + ", \"priority\": 300}").statusCode(200).body("allowed", equalTo(true)).body("priority", equalTo(300));
        rejected(base + ", \"priority\": 301}", "PriorityAboveLimit", "the job asks for priority 301; queue 'adm-prio-team' allows at most 300");
        rejected(base + ", \"priorityClass\": \"adm-prio\"}", "PriorityAboveLimit",
                "the job asks for priority 500; queue 'adm-prio-team' (priority class 'adm-prio') allows at most 300");
        // a queue that sets nothing: a number may not rise above its default (0 here), as on a fresh install
        rejected(job("alice", "ml", "adm-team", 1, "").replace("\"queue\"", "\"priority\": 2147483, \"queue\""), "PriorityAboveLimit",
                "the job asks for priority 2147483; queue 'adm-team' sets no maxPriority, so its default priority allows at most 0");
        check(base + ", \"priority\": 2147483647}").statusCode(400);
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"limits\": {\"maxPriority\": 2147483647}}")
                .when().put("/v1/queues/adm-wild")
                .then().statusCode(400);
    }

    @Test
    void everyRejectionIsAnAnswerWithATypedReason() {
        rejected(job("alice", "ml", "adm-nowhere", 1, ""), "QueueNotFound", "there is no queue named 'adm-nowhere'");
        rejected(job("alice", "ml", "adm-org", 1, ""), "NotLeafQueue", "jobs go to leaf queues; 'adm-org' has child queues adm-closed, adm-team");
        rejected(job("alice", "ml", "adm-closed", 1, ""), "QueueClosed", "queue 'adm-closed' is closed and admits no new jobs");
        rejected(job("mallory", "sales", "adm-team", 1, ""), "NotMember",
                "user 'mallory' (teams sales) is not a member of queue 'adm-org', whose members may submit to 'adm-team'");
        rejected("{\"user\": \"alice\", \"team\": \"ml\", \"queue\": \"adm-team\", \"priorityClass\": \"adm-urgent\", \"resources\": {\"gpus\": 1}}",
                "UnknownPriorityClass", "there is no priority class named 'adm-urgent'");
        rejected(job("alice", "ml", "adm-team", 9, ""), "ExceedsJobLimit",
                "the job asks for 9 GPUs; queue 'adm-team' allows at most 8 GPUs per job");
        rejected(job("alice", "ml", "adm-team", 6, ", \"gpuModel\": \"H100\""), "ExceedsQueueCapability",
                "the job asks for 6 H100 GPUs but queue 'adm-team' may hold at most 4, so it could never run");
        rejected("{\"user\": \"alice\", \"team\": \"ml\", \"queue\": \"adm-team\", \"resources\": {\"gpus\": 1, \"cpuMillis\": 200000}}",
                "ExceedsQueueCapability", "the job asks for 200000 CPU millicores but queue 'adm-team' may hold at most 128000, so it could never run");
    }

    @Test
    void userLimitsRunningGpusAndPendingJobsAreCounted() {
        put("/v1/user-limits/adm-dave", "{\"maxGpusPerJob\": 2}");
        rejected(job("adm-dave", "ml", "adm-team", 3, ""), "ExceedsJobLimit",
                "the job asks for 3 GPUs; the limit of user 'adm-dave' allows at most 2 GPUs per job");

        UUID running = UUID.randomUUID();
        UUID pending1 = UUID.randomUUID();
        UUID pending2 = UUID.randomUUID();
        try {
            db.execute("insert into allocation (job_id, queue, owner, gpus, cpu_millis, memory_mib, bound_at) values (?, 'adm-team', 'bob', 8, 0, 0, now())",
                    running);
            rejected(job("alice", "ml", "adm-team", 4, ""), "ExceedsTeamLimit",
                    "queue 'adm-team' runs 8 GPUs and may run at most 10; the job's 4 GPUs would exceed that. Submit again when jobs finish");
            check(job("alice", "ml", "adm-team", 2, "")).body("allowed", equalTo(true));

            db.execute("insert into pending_job (job_id, queue, owner, gpus, cpu_millis, memory_mib, queued_at) values (?, 'adm-team', 'erin', 1, 0, 0, now())",
                    pending1);
            db.execute("insert into pending_job (job_id, queue, owner, gpus, cpu_millis, memory_mib, queued_at) values (?, 'adm-team', 'erin', 1, 0, 0, now())",
                    pending2);
            rejected(job("erin", "ml", "adm-team", 1, ""), "TooManyPendingJobs",
                    "user 'erin' already has 2 pending jobs; queue 'adm-team' allows at most 2");
            check(job("frank", "ml", "adm-team", 1, "")).body("allowed", equalTo(true));
        } finally {
            db.execute("delete from allocation where job_id in (?, ?, ?)", running, pending1, pending2);
            db.execute("delete from pending_job where job_id in (?, ?, ?)", running, pending1, pending2);
        }
    }

    @Test
    void theQueueTreeAndClassesComeFromMemoryUntilEitherChangesWhoeverChangesThem() {
        String fits = job("alice", "ml", "adm-team", 1, "");
        check(fits).body("allowed", equalTo(true));
        long reloads = contexts.reloads();
        check(fits).body("allowed", equalTo(true));
        check(fits).body("allowed", equalTo(true));
        assertThat(contexts.reloads()).as("unchanged: not read again").isEqualTo(reloads);

        // through this replica's API
        put("/v1/queues/adm-team", "{\"parent\": \"adm-org\", \"state\": \"CLOSED\"}");
        rejected(fits, "QueueClosed", "queue 'adm-team' is closed and admits no new jobs");
        // behind its back (another replica, an operator with psql): seen by the very next check as well
        db.execute("update queue set state = 'OPEN' where name = 'adm-team'");
        check(fits).body("allowed", equalTo(true));
        db.execute("update priority_class set value = 600 where name = 'adm-prio'");
        check("{\"user\": \"alice\", \"team\": \"ml\", \"queue\": \"adm-team\", \"priorityClass\": \"adm-prio\","
                + " \"resources\": {\"gpus\": 1}}").body("allowed", equalTo(true)).body("priority", equalTo(600));
        db.execute("delete from priority_class where name = 'adm-prio'");
        check("{\"user\": \"alice\", \"team\": \"ml\", \"queue\": \"adm-team\", \"priorityClass\": \"adm-prio\","
                + " \"resources\": {\"gpus\": 1}}").body("allowed", equalTo(false));
        assertThat(contexts.reloads()).isGreaterThanOrEqualTo(reloads + 4);
    }

    @Test
    void malformedQuestionsAreBadRequests() {
        check("{\"queue\": \"adm-team\", \"resources\": {\"gpus\": 1}}").statusCode(400)
                .contentType(startsWith("application/problem+json"))
                .body("errors.field", hasItem("user"));
        check("{\"user\": \"alice\", \"queue\": \"adm-team\"}").statusCode(400).body("errors.field", hasItem("resources"));
        check("{\"user\": \"alice\", \"queue\": \"adm-team\", \"resources\": {\"gpus\": -1}}").statusCode(400)
                .body("errors.field", hasItem("resources.gpus"));
        check("{\"user\": \"alice\", \"queue\": ").statusCode(400).contentType(startsWith("application/problem+json"));
    }
}
