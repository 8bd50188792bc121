package dev.gantry.e2e;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.restassured.http.ContentType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.Keys;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * The web console in a real browser (Debian's headless Chromium through chromedriver) against the
 * four packaged services: log in with a token from {@code bin/gantry token}, submit the seed's
 * Volcano manifest by pasting it, see it on the heat map on the GPUs placement gave it, see why an
 * oversized gang waits, cancel it; pages update without reloading. Screenshots of each page go
 * to {@code target/console-screenshots/}. The steps share one browser, so they run in order.
 */
@ExtendWith(RunningGantry.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConsoleIT {

    /** The seed's tf-dist-train manifest, as users paste it. */
    private static final String TF_DIST_TRAIN = RunningGantry.seedTfDistTrain();

    private static final Path SCREENSHOTS = Path.of("target", "console-screenshots");
    private static final Duration PATIENCE = Duration.ofSeconds(90);

    private static WebDriver browser;
    private static Path profile;
    private static String console;
    private static String trainId;
    private static String gangId;

    @BeforeAll
    static void clusterQueuesAndBrowser() throws Exception {
        // the seed's two DGX A100 nodes (spine sp1, leaf lf1), a third on leaf lf2 (cordoned below), a PCIe node on sp2
        given().baseUri(RunningGantry.url("node-inventory-service")).auth().oauth2(RunningGantry.adminToken()).contentType(ContentType.JSON)
                .body(Files.readString(Path.of("src/test/resources/console-cluster.json")))
                .when().post("/v1/cluster:apply").then().statusCode(200);
        given().baseUri(RunningGantry.url("node-inventory-service")).auth().oauth2(RunningGantry.adminToken()).when().post("/v1/nodes/dgx-03:cordon").then().statusCode(200);
        given().baseUri(RunningGantry.url("quota-service")).auth().oauth2(RunningGantry.adminToken()).contentType(ContentType.JSON).body("{\"value\": 1000}")
                .when().put("/v1/priority-classes/high-priority").then().statusCode(200);
        given().baseUri(RunningGantry.url("quota-service")).auth().oauth2(RunningGantry.adminToken()).contentType(ContentType.JSON)
                .body("{\"weight\": 1, \"members\": {\"teams\": [\"vision\"]}}")
                .when().put("/v1/queues/normal").then().statusCode(200);
        given().baseUri(RunningGantry.url("quota-service")).auth().oauth2(RunningGantry.adminToken()).contentType(ContentType.JSON)
                .body("{\"weight\": 2, \"guarantee\": {\"gpus\": 4}}")
                .when().put("/v1/queues/urgent").then().statusCode(200);

        Files.createDirectories(SCREENSHOTS);
        profile = Files.createTempDirectory("gantry-chromium-");
        ChromeOptions options = new ChromeOptions();
        options.setBinary("/usr/bin/chromium");
        // the cancel confirmation is answered by the test; by default WebDriver would dismiss it on the next command
        options.setUnhandledPromptBehaviour(org.openqa.selenium.UnexpectedAlertBehaviour.IGNORE);
        options.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1400,1600", "--user-data-dir=" + profile);
        // the driver is given, so Selenium Manager never looks for (or downloads) one
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(Path.of("/usr/bin/chromedriver").toFile()).usingAnyFreePort().build();
        browser = new ChromeDriver(service, options);
        browser.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30));
        console = RunningGantry.url("admission-service");
    }

    @AfterAll
    static void closeBrowser() throws Exception {
        if (browser != null) {
            browser.quit();
        }
        if (profile != null) {
            try (var files = Files.walk(profile)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    @Test
    @Order(1)
    void logsInWithATokenAfterRefusingABadOne() throws Exception {
        browser.get(console + "/");
        assertThat(browser.getCurrentUrl()).endsWith("/login");
        browser.findElement(By.id("token")).sendKeys("not-a-token");
        browser.findElement(By.id("login")).click();
        // the form posts and the page comes back with the error: waited for, as the login below is
        await().atMost(Duration.ofSeconds(20)).ignoreExceptions().untilAsserted(() ->
                assertThat(browser.findElement(By.id("login-error")).getText()).contains("not accepted"));
        screenshot("login");

        browser.findElement(By.id("token")).sendKeys(RunningGantry.token("alice", "vision"));
        browser.findElement(By.id("login")).click();
        // the login posts and redirects: on a loaded machine the new page may take a moment
        await().atMost(Duration.ofSeconds(20)).until(() -> browser.getCurrentUrl().endsWith("/cluster"));
        assertThat(browser.findElement(By.id("viewer")).getText()).contains("alice").contains("vision");
        // the token is in an HttpOnly cookie: scripts cannot read it
        assertThat((String) js("return document.cookie")).doesNotContain("gantry_token");

        // keyboard: the first Tab reaches the skip link, which moves focus to the content
        browser.findElement(By.tagName("body")).sendKeys(Keys.TAB);
        WebElement skip = browser.switchTo().activeElement();
        assertThat(skip.getText()).isEqualTo("Skip to content");
        skip.sendKeys(Keys.ENTER);
        assertThat(browser.switchTo().activeElement().getAttribute("id")).isEqualTo("main");
    }

    @Test
    @Order(2)
    void pastedVolcanoManifestAppearsOnTheHeatMapOnItsGpus() throws Exception {
        browser.get(console + "/jobs");
        markPage();
        setValue(browser.findElement(By.id("yaml")), TF_DIST_TRAIN);
        browser.findElement(By.id("submit-yaml")).click();
        await().atMost(Duration.ofSeconds(10)).until(() -> browser.findElement(By.id("job-message")).getText().startsWith("Submitted tf-dist-train"));
        String message = browser.findElement(By.id("job-message")).getText();
        trainId = message.replaceAll("(?s).*\\(([0-9a-f-]{36})\\).*", "$1");
        assertThat(trainId).hasSize(36);

        // placed by a scheduling window; the jobs page follows over SSE, without a reload
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).until(() ->
                "PLACED".equals(rowState(trainId)) || "RUNNING".equals(rowState(trainId)));
        assertThat(pageUnchanged()).as("updated without reloading").isTrue();
        List<Map<String, Object>> allocations = given().baseUri(RunningGantry.url("placement-service")).auth().oauth2(RunningGantry.token("alice", "vision")).when().get("/v1/allocations")
                .then().statusCode(200).extract().jsonPath().<Map<String, Object>>getList("$").stream()
                .filter(a -> trainId.equals(a.get("jobId"))).toList();
        assertThat(allocations).isNotEmpty();
        int gpus = allocations.stream().mapToInt(a -> ((List<?>) a.get("gpus")).size()).sum();
        assertThat(gpus).isEqualTo(3);
        // the page re-renders its live part on every change: elements are looked up afresh until all holds
        String placement = await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() ->
                browser.findElement(By.cssSelector("tr[data-job='" + trainId + "'] .placement")).getText(), p -> !p.isBlank());
        screenshot("jobs");

        browser.get(console + "/cluster");
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(300)).ignoreExceptions().untilAsserted(() -> {
            for (Map<String, Object> a : allocations) {
                String node = (String) a.get("node");
                assertThat(node).isIn("dgx-01", "dgx-02");
                assertThat(placement).contains(node + ": GPU");
                for (Object gpu : (List<?>) a.get("gpus")) {
                    WebElement square = browser.findElement(By.cssSelector("[data-gpu='" + node + "/" + gpu + "']"));
                    WebElement slice = square.findElement(By.cssSelector(".slice[data-job='" + trainId + "']"));
                    assertThat(slice.getAttribute("data-queue")).isEqualTo("normal");
                    assertThat(slice.getCssValue("background-color")).isNotEqualTo(square.getCssValue("background-color"));
                    assertThat(square.getAttribute("aria-label")).contains("tf-dist-train (normal)");
                }
            }
            // exactly its 3 GPUs carry it; the cordoned node is marked in words
            assertThat(browser.findElements(By.cssSelector(".slice[data-job='" + trainId + "']"))).hasSize(3);
            assertThat(browser.findElement(By.cssSelector("[data-node='dgx-03'] .badge")).getText()).isEqualTo("cordoned");
            assertThat(browser.findElements(By.cssSelector("[data-node='pcie-01'] .island.pcie"))).hasSize(1);
            assertThat(browser.findElement(By.cssSelector("tr[data-model='A100-SXM4-80GB']")).getText())
                    .startsWith("A100-SXM4-80GB 24 3 13 8");
        });
        screenshot("cluster");
    }

    @Test
    @Order(3)
    void anOversizedGangSaysWhyItWaits() throws Exception {
        browser.get(console + "/jobs");
        markPage();
        browser.findElement(By.id("j-name")).sendKeys("huge-gang");
        browser.findElement(By.id("j-queue")).sendKeys("normal");
        setValue(browser.findElement(By.id("j-replicas")), "4");
        setValue(browser.findElement(By.id("j-gpus")), "8");
        browser.findElement(By.id("submit-form")).click();
        await().atMost(Duration.ofSeconds(10)).until(() -> browser.findElement(By.id("job-message")).getText().startsWith("Submitted huge-gang"));
        gangId = browser.findElement(By.id("job-message")).getText().replaceAll("(?s).*\\(([0-9a-f-]{36})\\).*", "$1");

        // 4 x 8 GPUs on a cluster of 24 usable A100... the window says so, and the page shows it without a reload
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).until(() -> {
            String reason = reason(gangId);
            return !reason.isBlank() && !reason.equals("waiting for the next scheduling window");
        });
        assertThat(rowState(gangId)).isEqualTo("QUEUED");
        assertThat(pageUnchanged()).isTrue();
        String reason = reason(gangId);
        assertThat(reason).as("pending reason in words").matches(".*[a-z]+ [a-z]+.*");
        System.out.println("ConsoleIT: pending reason of huge-gang: " + reason);
        screenshot("jobs-pending");
    }

    @Test
    @Order(4)
    void queuesPageShowsTheFiguresAndTheFairShare() throws Exception {
        browser.get(console + "/queues");
        // the page shows quota-service's figures as they are now: pending (the gang's 32 GPUs at least)
        // and what normal holds (tf-dist-train, until its simulated run time ends)
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).ignoreExceptions().until(() -> {
            browser.navigate().refresh();
            io.restassured.path.json.JsonPath status = given().baseUri(RunningGantry.url("quota-service")).auth().oauth2(RunningGantry.token("alice", "vision")).when()
                    .get("/v1/queues/normal/status").then().statusCode(200).extract().jsonPath();
            String pending = status.getString("pending.gpus").replaceAll("\\.0$", "");
            String allocated = status.getString("allocated.gpus").replaceAll("\\.0$", "");
            WebElement q = browser.findElement(By.cssSelector("section.queue[data-queue='normal']"));
            // quota counts the gang's 32 GPUs as pending (plus whatever else waits in normal at that moment)
            return Integer.parseInt(pending) >= 32
                    && q.findElement(By.cssSelector("[data-figure='pending'] .num")).getText().equals(pending + " GPUs")
                    && q.findElement(By.cssSelector("[data-figure='allocated'] .num")).getText().equals(allocated + " GPUs");
        });
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(300)).ignoreExceptions().untilAsserted(() -> {
            WebElement normal = browser.findElement(By.cssSelector("section.queue[data-queue='normal']"));
            for (String figure : List.of("guarantee", "deserved", "allocated", "borrowed", "pending")) {
                assertThat(normal.findElements(By.cssSelector("[data-figure='" + figure + "'] .track"))).hasSize(1);
                assertThat(normal.findElement(By.cssSelector("[data-figure='" + figure + "'] .reason")).getText()).isNotBlank();
            }
            assertThat(browser.findElement(By.cssSelector("section.queue[data-queue='urgent'] [data-figure='guarantee'] .num")).getText())
                    .isEqualTo("4 GPUs");
            assertThat(browser.findElement(By.cssSelector("details.explain")).getText()).contains("deserves");
        });
        screenshot("queues");
    }

    @Test
    @Order(5)
    void cancellingTheGangFromTheListEndsIt() throws Exception {
        browser.get(console + "/jobs");
        markPage();
        // By now this browser has loaded a dozen console pages, each with a live stream. Until the page
        // closed its stream on pagehide, Chromium kept those connections and this cancel waited forever
        // for one of its six per host. From the keyboard: focus the button, press Enter, the confirmation
        // answered yes. A live refresh may replace the row between two WebDriver calls (it keeps the focus
        // on the new button); a stale element is retried until one Enter lands.
        js("window.confirm = () => true");
        AtomicBoolean pressed = new AtomicBoolean();
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(300)).ignoreException(StaleElementReferenceException.class)
                .until(() -> {
                    if (!pressed.get()) {
                        js("document.querySelector(\"[data-cancel='" + gangId + "']\").focus()");
                        browser.switchTo().activeElement().sendKeys(Keys.ENTER);
                        pressed.set(true);
                    }
                    return !browser.findElement(By.id("job-message")).getText().isBlank();
                });
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(300)).until(() -> "CANCELLED".equals(rowState(gangId)));
        assertThat(browser.findElement(By.id("job-message")).getText()).isEqualTo("Cancelled huge-gang.");
        assertThat(browser.findElements(By.cssSelector("[data-cancel='" + gangId + "']"))).isEmpty();
        assertThat(pageUnchanged()).isTrue();
        given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(RunningGantry.token("alice", "vision"))
                .when().get("/v1/jobs/" + gangId).then().statusCode(200).body("state", org.hamcrest.Matchers.equalTo("CANCELLED"));
        screenshot("jobs-cancelled");
    }

    @Test
    @Order(6)
    void aNodeShrunkUnderItsJobsIsShownQuarantinedWithWhyAndTheOthersGoOn() throws Exception {
        // a long job on the PCIe node's 4 GPUs (1,000 s of simulated run time), placed
        String pinned = given().baseUri(console).auth().oauth2(RunningGantry.token("alice", "vision")).contentType(ContentType.JSON)
                .body("""
                        {"name": "on-pcie", "queue": "normal", "gpuModels": ["V100-PCIE-32GB"], "estimatedRuntimeSeconds": 100000,
                         "taskGroups": [{"name": "worker", "replicas": 1, "gpusPerReplica": 4}]}""")
                .when().post("/v1/jobs").then().statusCode(201).extract().path("id");
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).until(() -> "PLACED".equals(jobState(pinned)) || "RUNNING".equals(jobState(pinned)));

        // the cluster file now says the node has 2 GPUs: GPUs 2 and 3 of the running job are not on it
        String cluster = Files.readString(Path.of("src/test/resources/console-cluster.json"));
        applyCluster(Files.readString(Path.of("src/test/resources/console-cluster-pcie-shrunk.json")));

        browser.get(console + "/cluster");
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).ignoreExceptions().untilAsserted(() -> {
            browser.navigate().refresh();
            WebElement node = browser.findElement(By.cssSelector("[data-node='pcie-01']"));
            assertThat(node.findElement(By.cssSelector(".badge")).getText()).isEqualTo("QUARANTINED");
            assertThat(node.findElement(By.cssSelector(".reason")).getText())
                    .startsWith("quarantined by placement since").contains("is not on node pcie-01");
        });
        screenshot("cluster-quarantined");
        // its job keeps running where it is, and a job for another node is still placed
        assertThat(jobState(pinned)).isIn("PLACED", "RUNNING");
        String other = given().baseUri(console).auth().oauth2(RunningGantry.token("alice", "vision")).contentType(ContentType.JSON)
                .body("""
                        {"name": "elsewhere", "queue": "normal", "gpuModels": ["A100-SXM4-80GB"],
                         "taskGroups": [{"name": "worker", "replicas": 1, "gpusPerReplica": 1}]}""")
                .when().post("/v1/jobs").then().statusCode(201).extract().path("id");
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).until(() -> !"QUEUED".equals(jobState(other)));

        // the file says 4 again: the node is back, no badge
        applyCluster(cluster);
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).ignoreExceptions().untilAsserted(() -> {
            browser.navigate().refresh();
            assertThat(browser.findElements(By.cssSelector("[data-node='pcie-01'] .badge"))).isEmpty();
        });
        given().baseUri(console).auth().oauth2(RunningGantry.token("alice", "vision")).when().delete("/v1/jobs/" + pinned).then().statusCode(200);
    }

    private static void applyCluster(String file) {
        given().baseUri(RunningGantry.url("node-inventory-service")).auth().oauth2(RunningGantry.adminToken()).contentType(ContentType.JSON)
                .body(file).when().post("/v1/cluster:apply").then().statusCode(200);
    }

    private static String jobState(String id) {
        return given().baseUri(console).auth().oauth2(RunningGantry.token("alice", "vision")).when().get("/v1/jobs/" + id)
                .then().statusCode(200).extract().path("state");
    }

    // read in one script call: the live part may be re-rendered between two WebDriver calls
    private static String rowState(String id) {
        return (String) js("const r = document.querySelector(\"tr[data-job='\" + arguments[0] + \"']\"); return r ? r.dataset.state : null", id);
    }

    private static String reason(String id) {
        Object text = js("const c = document.querySelector(\"tr[data-job='\" + arguments[0] + \"'] .reason\"); return c ? c.textContent : ''", id);
        return String.valueOf(text).strip();
    }

    /** Marks the loaded page; {@link #pageUnchanged} is false after any reload or navigation. */
    private static void markPage() {
        js("window.gantryNoReload = true");
    }

    private static boolean pageUnchanged() {
        return Boolean.TRUE.equals(js("return window.gantryNoReload === true"));
    }

    private static void setValue(WebElement field, String value) {
        field.clear();
        // sendKeys would type a whole manifest key by key; the value and an input event are what a paste gives
        js("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input', {bubbles: true}))", field, value);
    }

    private static Object js(String script, Object... args) {
        return ((JavascriptExecutor) browser).executeScript(script, args);
    }

    private static void screenshot(String name) throws Exception {
        Path png = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE).toPath();
        Files.copy(png, SCREENSHOTS.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
        // how long the page took to load (Navigation Timing), for the record
        Object loaded = js("const n = performance.getEntriesByType('navigation')[0]; return n ? Math.round(n.duration) : -1");
        System.out.println("ConsoleIT: page " + name + " (" + browser.getCurrentUrl() + ") loaded in " + loaded + " ms");
    }
}
