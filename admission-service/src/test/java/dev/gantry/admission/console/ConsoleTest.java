package dev.gantry.admission.console;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.endsWith;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;

import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestTokens;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The console's server side: login and its cookie, the pages rendered from (stubbed) inventory,
 * placement and quota answers plus admission's real jobs, the live stream. The real services and
 * a real browser: e2e-tests ConsoleIT.
 */
@QuarkusTest
@QuarkusTestResource(value = ConsoleServicesStub.class, restrictToAnnotatedClass = true)
class ConsoleTest {

    @Inject
    TestDatabase db;

    @TestHTTPResource("/console/updates")
    URL updates;

    static String token(String user, String... groups) {
        return TestTokens.user(user, groups);
    }

    @AfterEach
    void reset() {
        ConsoleServicesStub.allocations = "[]";
        ConsoleServicesStub.inventoryDown = false;
        ConsoleServicesStub.extraNodes = "";
        ConsoleServicesStub.startForecasts = ConsoleServicesStub.NO_FORECASTS;
    }

    private static String submit(String token, String name, int replicas, int gpus) {
        return given().auth().oauth2(token).contentType(ContentType.JSON)
                .body("""
                        {"name": "%s", "queue": "normal", "minAvailable": %d,
                         "taskGroups": [{"name": "worker", "replicas": %d, "gpusPerReplica": %d}]}
                        """.formatted(name, replicas, replicas, gpus))
                .when().post("/v1/jobs").then().statusCode(201).extract().path("id");
    }

    private static String page(String path, String token) {
        return given().redirects().follow(false).cookie(ConsoleResource.COOKIE, token).accept("text/html")
                .when().get(path).then().statusCode(200).contentType(containsString("text/html")).extract().asString();
    }

    @Test
    void withoutLoginEveryPageGoesToTheLoginForm() {
        for (String path : new String[] {"/", "/cluster", "/queues", "/jobs"}) {
            given().redirects().follow(false).when().get(path)
                    .then().statusCode(303).header("Location", endsWith("/login"));
        }
        given().when().get("/login").then().statusCode(200)
                .body(containsString("<label for=\"token\">Access token</label>"))
                .body(containsString("bin/gantry token USER --team TEAM"));
    }

    /** The anti-forgery token the login page hands out (its cookie; the form carries the same value). */
    private static String csrf() {
        Response page = given().when().get("/login");
        String value = page.getCookie(ConsoleCsrf.COOKIE);
        assertThat(value).isNotBlank();
        assertThat(page.body().asString()).contains("name=\"csrf\" value=\"" + value + "\"");
        return value;
    }

    private static Response postLogin(String token, String csrf) {
        return given().redirects().follow(false).cookie(ConsoleCsrf.COOKIE, csrf).formParam("csrf", csrf).formParam("token", token)
                .when().post("/login");
    }

    @Test
    void loginRefusesABadTokenAndStoresNothing() {
        String forged = token("mallory", "vision").replaceFirst("\\.[^.]+$", ".c2lnbmF0dXJl");
        for (String bad : new String[] {"not-a-token", forged}) {
            Response response = postLogin(bad, csrf());
            assertThat(response.statusCode()).isEqualTo(401);
            assertThat(response.body().asString()).contains("That token was not accepted");
            assertThat(response.getCookie(ConsoleResource.COOKIE)).isNull();
        }
        postLogin(" ", csrf()).then().statusCode(400);
    }

    @Test
    void aLoginFormPostedFromAnotherSiteIsRefused() {
        String token = token("mallory", "vision");
        // no token at all, a token without its cookie, a token that does not match the cookie
        for (Response forged : List.of(given().redirects().follow(false).formParam("token", token).when().post("/login"),
                given().redirects().follow(false).formParam("csrf", "guess").formParam("token", token).when().post("/login"),
                given().redirects().follow(false).cookie(ConsoleCsrf.COOKIE, csrf()).formParam("csrf", "guess").formParam("token", token)
                        .when().post("/login"))) {
            assertThat(forged.statusCode()).isEqualTo(403);
            assertThat(forged.getCookie(ConsoleResource.COOKIE)).as("no session for the forger").isNull();
        }
    }

    @Test
    void loginKeepsTheTokenInAnHttpOnlyCookieTheApiAccepts() {
        String token = token("alice", "vision");
        Response login = postLogin("Bearer " + token, csrf());
        assertThat(login.statusCode()).isEqualTo(303);
        assertThat(login.header("Location")).endsWith("/cluster");
        io.restassured.http.Cookie cookie = login.getDetailedCookie(ConsoleResource.COOKIE);
        assertThat(cookie.getValue()).isEqualTo(token);
        assertThat(cookie.isHttpOnly()).isTrue();
        assertThat(cookie.getSameSite()).isEqualToIgnoringCase("Strict");
        assertThat(cookie.isSecured()).as("served over plain HTTP").isFalse();
        assertThat(cookie.getMaxAge()).isBetween(500L, 600L);
        String csrf = login.getCookie(ConsoleCsrf.COOKIE);
        assertThat(csrf).as("a new session, a new anti-forgery token").isNotBlank();
        // the API takes the cookie, and the Authorization header as before
        String id = submit(token, "cookie-visible", 1, 1);
        given().cookie(ConsoleResource.COOKIE, token).when().get("/v1/jobs/" + id).then().statusCode(200).body("owner", equalTo("alice"));
        given().auth().oauth2(token).when().get("/v1/jobs/" + id).then().statusCode(200);
        // what changes something, on the cookie alone, needs the anti-forgery header too: a page of another site cannot add it
        given().cookie(ConsoleResource.COOKIE, token).when().delete("/v1/jobs/" + id).then().statusCode(403)
                .contentType(containsString("application/problem+json"));
        given().cookie(ConsoleResource.COOKIE, token).cookie(ConsoleCsrf.COOKIE, csrf).header(ConsoleCsrf.HEADER, "guess")
                .when().delete("/v1/jobs/" + id).then().statusCode(403);
        given().cookie(ConsoleResource.COOKIE, token).cookie(ConsoleCsrf.COOKIE, csrf).header(ConsoleCsrf.HEADER, csrf)
                .when().delete("/v1/jobs/" + id).then().statusCode(200).body("state", equalTo("CANCELLED"));
        given().redirects().follow(false).cookie(ConsoleResource.COOKIE, token).when().post("/logout").then().statusCode(403);
        given().redirects().follow(false).cookie(ConsoleResource.COOKIE, token).cookie(ConsoleCsrf.COOKIE, csrf).formParam("csrf", csrf)
                .when().post("/logout").then().statusCode(303).header("Set-Cookie", containsString("Max-Age=0"));
    }

    @Test
    void behindATlsProxyTheCookiesAreSecureAndEveryPageRefusesFraming() {
        Response login = given().redirects().follow(false).header("X-Forwarded-Proto", "https").cookie(ConsoleCsrf.COOKIE, "t0ken")
                .formParam("csrf", "t0ken").formParam("token", token("alice", "vision")).when().post("/login");
        assertThat(login.statusCode()).isEqualTo(303);
        assertThat(login.getDetailedCookie(ConsoleResource.COOKIE).isSecured()).isTrue();
        given().when().get("/login").then().statusCode(200)
                .header("Content-Security-Policy", containsString("frame-ancestors 'none'"))
                .header("Content-Security-Policy", containsString("script-src 'self'"))
                .header("X-Frame-Options", "DENY")
                .header("X-Content-Type-Options", "nosniff");
    }

    @Test
    void aCookieThatNoLongerVerifiesSendsPagesToLoginAndTheApiTo401() {
        String stale = token("alice", "vision").replaceFirst("\\.[^.]+$", ".c2lnbmF0dXJl");
        given().redirects().follow(false).cookie(ConsoleResource.COOKIE, stale).accept("text/html").when().get("/jobs")
                .then().statusCode(303).header("Location", endsWith("/login?expired=1"))
                .header("Set-Cookie", containsString("Max-Age=0"));
        given().redirects().follow(false).cookie(ConsoleResource.COOKIE, stale).accept("application/json").when().get("/v1/jobs")
                .then().statusCode(401);
        given().when().get("/login?expired=1").then().statusCode(200).body(containsString("Your session has ended"));
    }

    @Test
    void theConsoleReadsTheOtherServicesWithAdmissionsServiceTokenNotTheUsers() {
        String alice = token("alice", "vision");
        ConsoleServicesStub.AUTHORIZATIONS.clear();
        page("/cluster", alice);
        page("/queues", alice);
        assertThat(ConsoleServicesStub.AUTHORIZATIONS).isNotEmpty()
                .allSatisfy(header -> assertThat(ConsoleServicesStub.isServiceToken(header)).as(header).isTrue())
                .noneMatch(header -> header.contains(alice));
    }

    @Test
    void clusterPageDrawsEveryGpuColouredByQueueSplitWhenShared() {
        String alice = token("alice", "vision");
        String train = submit(alice, "heat-train", 2, 2);
        String shared = submit(token("bob", "speech"), "heat-notebook", 1, 1);
        ConsoleServicesStub.allocations = """
                [{"jobId": "%s", "task": "worker-0", "node": "dgx-01", "gpus": [1, 2], "gpuMilli": null, "allocatedAt": "2026-12-02T12:00:00Z"},
                 {"jobId": "%s", "task": "worker-1", "node": "dgx-01", "gpus": [3, 4], "gpuMilli": null, "allocatedAt": "2026-12-02T12:00:00Z"},
                 {"jobId": "%s", "task": "main-0", "node": "dgx-01", "gpus": [0], "gpuMilli": 500, "allocatedAt": "2026-12-02T12:00:00Z"}]
                """.formatted(train, train, shared);

        String html = page("/cluster", alice);
        // spine > leaf > node, NVLink island, PCIe-only GPUs of pcie-01 (GPUs 2 and 3 are in no island)
        assertThat(html).contains("Spine sp1").contains("Leaf lf1").contains("Spine sp2").contains("Leaf lf3")
                .contains("data-node=\"dgx-01\"").contains("data-node=\"pcie-01\"")
                .contains("class=\"island nvlink\"").contains("class=\"island pcie\"");
        for (int gpu = 1; gpu <= 4; gpu++) {
            assertThat(slice(html, "dgx-01/" + gpu)).contains("data-job=\"" + train + "\"").contains("data-queue=\"normal\"")
                    .contains("width:100%");
        }
        // a shared GPU: half of it, and bob's job is shown to alice by queue only
        assertThat(slice(html, "dgx-01/0")).contains("data-job=\"" + shared + "\"").contains("width:50%")
                .contains("a job (normal, 500m)").doesNotContain("heat-notebook");
        assertThat(slice(html, "dgx-01/5")).contains("gpu idle").doesNotContain("data-job");
        // cordoned and NotReady marked in words, not only colour
        assertThat(html).containsPattern("class=\"node cordoned\" data-node=\"dgx-02\"")
                .containsPattern("class=\"node not-ready\" data-node=\"pcie-01\"")
                .contains("<span class=\"badge\">cordoned</span>").contains("<span class=\"badge\">NotReady</span>");
        // totals: 16 A100s, 4.5 in use, 8 - 4.5 free on dgx-01 (dgx-02 is cordoned); 4 L4s on a NotReady node
        assertThat(html).containsPattern("<th scope=\"row\">A100-SXM4-80GB</th><td>16</td><td>4.5</td><td>3.5</td><td>8</td>")
                .containsPattern("<th scope=\"row\">L4</th><td>4</td><td>0</td><td>0</td><td>4</td>");
    }

    /** The markup of one GPU square. */
    private static String slice(String html, String gpu) {
        int at = html.indexOf("data-gpu=\"" + gpu + "\"");
        assertThat(at).as("GPU " + gpu + " drawn").isPositive();
        int start = html.lastIndexOf("<div", at);
        return html.substring(start, html.indexOf("</div>", at));
    }

    @Test
    void aQuarantinedNodeIsMarkedQuarantinedWithPlacementsReason() {
        ConsoleServicesStub.extraNodes = ConsoleServicesStub.QUARANTINED_NODE;
        String html = page("/cluster", token("alice", "vision"));
        assertThat(html).contains("class=\"node quarantined\" data-node=\"dgx-shrunk\"")
                .contains("<span class=\"badge\">QUARANTINED</span>")
                .contains("<p class=\"reason\" role=\"note\">quarantined by placement since 2026-12-05T12:00:00Z: "
                        + "gpus: 4 is fewer than the 7 GPUs allocated on it</p>");
        // its GPUs are not counted as free
        assertThat(html).containsPattern("<th scope=\"row\">H100-SXM5-80GB</th><td>4</td><td>0</td><td>0</td><td>4</td>");
    }

    @Test
    void aNodeWithSimulatedGpusIsMarkedSimulated() {
        ConsoleServicesStub.extraNodes = ConsoleServicesStub.SIMULATED_NODE;
        String html = page("/cluster", token("alice", "vision"));
        assertThat(html).contains("aria-label=\"Node laptop-sim-0, A100-SXM4-80GB (simulated GPUs), ")
                .containsPattern("<h5>laptop-sim-0 <span class=\"badge simulated\" title=\"[^\"]+\">simulated</span></h5>")
                .contains("<p class=\"model\">A100-SXM4-80GB (simulated) · ");
        // a node with real GPUs says nothing of the kind
        assertThat(html).doesNotContain("Node dgx-01, A100-SXM4-80GB (simulated");
    }

    @Test
    void aServiceThatDoesNotAnswerIsSaidSoAndThePageStillRenders() {
        ConsoleServicesStub.inventoryDown = true;
        assertThat(page("/cluster", token("alice", "vision"))).contains("node-inventory-service did not answer").contains("0 nodes");
    }

    @Test
    void queuesPageShowsEachFigureAsABarWithItsReason() {
        String html = page("/queues", token("alice", "vision"));
        assertThat(html).contains("data-queue=\"normal\"").contains("data-queue=\"urgent\"")
                .contains("How fair share works")
                .contains("16: cluster capacity: sum of ready nodes")
                .contains("deserved because of weight 2").contains("usage reason of urgent");
        // bars on one scale (16 GPUs): urgent deserves 6 = 38 %, normal is allocated 12.5 = 78 %
        assertThat(html).containsPattern("(?s)data-queue=\"urgent\".*?<span class=\"num\" tabindex=\"0\" title=\"deserved because of weight 2\">6 GPUs</span>"
                + "\\s*<span class=\"track\" aria-hidden=\"true\"><span class=\"fill deserved\" style=\"width:38%\">");
        assertThat(html).containsPattern("(?s)data-queue=\"normal\".*?12.5 GPUs</span>\\s*<span class=\"track\" aria-hidden=\"true\">"
                + "<span class=\"fill allocated\" style=\"width:78%\">");
    }

    @Test
    void jobsPageFiltersByScopeAndShowsPlacementAndWhyAJobWaits() {
        String alice = token("alice", "vision");
        String carol = token("carol", "vision");
        String mine = submit(alice, "list-mine", 1, 2);
        String teammates = submit(carol, "list-carols", 8, 8);
        String otherTeam = submit(token("bob", "speech"), "list-bobs", 1, 1);
        db.execute("update job set pending_reason = ? where id = ?::uuid",
                "gang of 8 x 8 GPUs: no leaf has 8 free 8-GPU nodes (largest: 1)", teammates);
        db.execute("update job set state = 'RUNNING' where id = ?::uuid", mine);
        ConsoleServicesStub.allocations = """
                [{"jobId": "%s", "task": "worker-0", "node": "dgx-01", "gpus": [6, 7], "gpuMilli": null, "allocatedAt": "2030-01-01T00:00:00Z"}]
                """.formatted(mine);

        String team = page("/jobs", alice);
        assertThat(team).contains("data-job=\"" + mine + "\"").contains("data-job=\"" + teammates + "\"")
                .doesNotContain("data-job=\"" + otherTeam + "\"")
                .contains("dgx-01: GPU 6, 7")
                .contains("gang of 8 x 8 GPUs: no leaf has 8 free 8-GPU nodes (largest: 1)")
                .contains("data-cancel=\"" + teammates + "\"");
        String onlyMine = page("/jobs?scope=mine", alice);
        assertThat(onlyMine).contains("data-job=\"" + mine + "\"").doesNotContain("data-job=\"" + teammates + "\"");
        // "all" is for admins; for others it means their teams
        assertThat(page("/jobs?scope=all", alice)).doesNotContain("data-job=\"" + otherTeam + "\"").doesNotContain("value=\"all\"");
        String admin = page("/jobs?scope=all&state=QUEUED", TestTokens.admin());
        assertThat(admin).contains("data-job=\"" + otherTeam + "\"").contains("data-job=\"" + teammates + "\"")
                .doesNotContain("data-job=\"" + mine + "\"");
        // every form control has a label
        assertThat(team).contains("<label for=\"j-name\">").contains("<label for=\"yaml\">").contains("<label for=\"f-queue\">");
    }

    @Test
    void jobsPageShowsWhenAWaitingJobIsExpectedToStartAndWhy() {
        String alice = token("alice", "vision");
        String head = submit(alice, "start-head", 1, 8);
        String behind = submit(alice, "start-behind", 1, 8);
        ConsoleServicesStub.startForecasts = """
                {"computedAt": "2026-12-07T10:00:00Z", "maxJobs": 500, "items": [
                  {"jobId": "%s", "startAt": "%s", "basis": "reservation", "waitsFor": [], "note": "reserved: after 1 job ends"},
                  {"jobId": "%s", "startAt": null, "basis": "unknown", "waitsFor": [], "note": "unknown: not within the 168 h looked ahead"}]}
                """.formatted(head, java.time.Instant.now().plusSeconds(3 * 3600 + 600), behind);

        String html = page("/jobs?scope=mine&state=QUEUED", alice);
        assertThat(html).contains("<th scope=\"col\">Expected start</th>");
        String headRow = html.substring(html.indexOf("data-job=\"" + head + "\""));
        assertThat(headRow.substring(0, headRow.indexOf("</tr>"))).containsPattern("<td class=\"start\">in 3 h (9|10) min \\(reserved: after 1 job ends\\)</td>");
        String behindRow = html.substring(html.indexOf("data-job=\"" + behind + "\""));
        assertThat(behindRow.substring(0, behindRow.indexOf("</tr>"))).contains("<td class=\"start\">unknown: not within the 168 h looked ahead</td>");
    }

    @Test
    void jobsPageShowsWhereAJobRanFromItsOwnPlacementWithItsAttemptAndExitCode() {
        String alice = token("alice", "vision");
        String running = submit(alice, "view-running", 1, 2);
        String failed = submit(alice, "view-failed", 1, 1);
        String requeued = submit(alice, "view-requeued", 1, 1);
        ConsoleServicesStub.allocations = "[]"; // placement knows nothing of them: the job's own placement says where
        db.execute("update job set state = 'RUNNING', attempts = 2, placement = ? where id = ?::uuid",
                "{\"attempt\": 2, \"boundAt\": \"2030-01-01T00:00:00Z\", \"tasks\": [{\"task\": \"worker-0\", \"node\": \"dgx-02\", "
                        + "\"gpus\": [3, 4], \"gpuMilli\": null}]}", running);
        db.execute("update job set state = 'FAILED', attempts = 1, exit_code = 3, pending_reason = ?, placement = ? where id = ?::uuid",
                "task worker-0 on node dgx-01 exited with code 3",
                "{\"attempt\": 1, \"boundAt\": \"2030-01-01T00:00:00Z\", \"tasks\": [{\"task\": \"worker-0\", \"node\": \"dgx-01\", "
                        + "\"gpus\": [5], \"gpuMilli\": null}]}", failed);
        db.execute("update job set state = 'QUEUED', attempts = 1, pending_reason = 'requeued: node dgx-01 lost', placement = ? where id = ?::uuid",
                "{\"attempt\": 1, \"boundAt\": \"2030-01-01T00:00:00Z\", \"tasks\": [{\"task\": \"worker-0\", \"node\": \"dgx-01\", "
                        + "\"gpus\": [6], \"gpuMilli\": null}]}", requeued);

        String html = page("/jobs?scope=mine", alice);
        assertThat(row(html, running)).contains("<td class=\"placement\">dgx-02: GPU 3, 4 (attempt 2)</td>");
        assertThat(row(html, failed)).contains("<td class=\"placement\">ran on dgx-01: GPU 5</td>")
                .contains("exit code 3: task worker-0 on node dgx-01 exited with code 3");
        assertThat(row(html, requeued)).contains("<td class=\"placement\"></td>").contains("requeued: node dgx-01 lost");
    }

    /** The markup of one job's row of the jobs page. */
    private static String row(String html, String job) {
        int start = html.indexOf("<tr data-job=\"" + job + "\"");
        assertThat(start).as("row of " + job).isNotNegative();
        return html.substring(start, html.indexOf("</tr>", start));
    }

    @Test
    void liveStreamSendsAFingerprintAndANewOneWhenAJobChanges() throws Exception {
        String alice = token("alice", "vision");
        HttpClient http = HttpClient.newHttpClient();
        HttpRequest request = HttpRequest.newBuilder(URI.create(updates.toString()))
                .header("Cookie", ConsoleResource.COOKIE + "=" + alice).header("Accept", "text/event-stream").build();
        HttpResponse<java.io.InputStream> response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
        assertThat(response.statusCode()).isEqualTo(200);
        try (BufferedReader events = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            String first = nextData(events);
            submit(alice, "live-change", 1, 1);
            String second = nextData(events);
            assertThat(second).isNotEqualTo(first);
        }
        given().when().get("/console/updates").then().statusCode(401);
    }

    private static String nextData(BufferedReader events) throws Exception {
        CompletableFuture<String> data = CompletableFuture.supplyAsync(() -> {
            try {
                for (String line = events.readLine(); line != null; line = events.readLine()) {
                    if (line.startsWith("data:")) {
                        return line.substring(5).strip();
                    }
                }
                return null;
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        String value = data.get(10, TimeUnit.SECONDS);
        assertThat(value).isNotBlank();
        return value;
    }
}
