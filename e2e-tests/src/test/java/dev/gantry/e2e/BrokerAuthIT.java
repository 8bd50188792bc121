package dev.gantry.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gantry.contracts.events.Subjects;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.JetStreamOptions;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.PublishOptions;
import io.nats.client.api.PublishAck;
import io.nats.client.api.StreamConfiguration;
import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The broker rules of issue 19 item 3, on a real nats-server started with the very configuration
 * {@code bin/gantry up} runs its broker with ({@code bin/lib/infra.sh write_broker_config}), in a
 * temporary folder on a free port of its own: no credentials, no connection; a service may publish
 * its own subjects into their stream and nothing else, and may not delete or purge a stream.
 */
class BrokerAuthIT {

    private static Path dir;
    private static int port;
    private static Process server;

    @BeforeAll
    static void startBroker() throws Exception {
        dir = Files.createTempDirectory("gantry-broker-auth-");
        port = freePort();
        server = broker(dir, port, null);
        // the streams as the services declare them (admin may; the services' own start-up declares them too)
        try (Connection admin = connect("admin", password("admin"))) {
            declareStreams(admin);
        }
    }

    /** A nats-server on the configuration write_broker_config writes into DIR (for DEPLOYMENTS, when given). */
    private static Process broker(Path dir, int port, String deployments) throws Exception {
        Path root = Path.of(System.getProperty("gantry.root", ".."));
        ProcessBuilder writer = new ProcessBuilder("bash", "-c",
                "source \"$0\" && write_broker_config \"$1\" \"$2\"", root.resolve("bin/lib/infra.sh").toString(),
                dir.toString(), String.valueOf(port)).redirectErrorStream(true);
        writer.environment().remove("GANTRY_BROKER_DEPLOYMENTS");
        writer.environment().remove("GANTRY_DEPLOYMENT");
        if (deployments != null) {
            writer.environment().put("GANTRY_BROKER_DEPLOYMENTS", deployments);
        }
        Process write = writer.start();
        String out = new String(write.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(write.waitFor()).as(out).isZero();
        Process started = new ProcessBuilder(natsServer(), "-c", dir.resolve("nats.conf").toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("nats.log").toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (true) {
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return started;
            } catch (IOException notYet) {
                if (!started.isAlive() || System.nanoTime() > deadline) {
                    throw new IllegalStateException("nats-server did not start: " + Files.readString(dir.resolve("nats.log")));
                }
                Thread.sleep(100);
            }
        }
    }

    private static void declareStreams(Connection admin) throws Exception {
        JetStreamManagement jsm = admin.jetStreamManagement();
        for (String stream : List.of(Subjects.JOBS_STREAM, Subjects.NODES_STREAM, Subjects.QUOTA_STREAM, Subjects.PLACEMENTS_STREAM)) {
            jsm.addStream(StreamConfiguration.builder().name(stream).subjects(stream.toLowerCase() + ".>").build());
        }
    }

    /**
     * Issue 18 item 8: two deployments on one broker (GANTRY_BROKER_DEPLOYMENTS="gantry lab2"), each an
     * account of its own with its own streams and users (lab2's named lab2-admission, ...): a job one
     * deployment's admission publishes is in its own JOBS stream only, and one deployment's password does
     * not open the other's user.
     */
    @Test
    void twoDeploymentsShareOneBrokerWithoutSeeingEachOthersEvents() throws Exception {
        Path shared = Files.createTempDirectory("gantry-broker-shared-");
        int sharedPort = freePort();
        Process broker = broker(shared, sharedPort, "gantry lab2");
        try {
            java.util.function.BiFunction<String, String, Options> as = (user, password) -> new Options.Builder()
                    .server("nats://127.0.0.1:" + sharedPort).maxReconnects(0).connectionTimeout(Duration.ofSeconds(2))
                    .errorListener(new io.nats.client.ErrorListener() {
                    }).userInfo(user, password).build();
            java.util.function.Function<String, String> secret = user -> {
                try {
                    return Files.readString(shared.resolve("credentials").resolve(user)).strip();
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            };
            for (String admin : List.of("admin", "lab2-admin")) {
                try (Connection connection = Nats.connect(as.apply(admin, secret.apply(admin)))) {
                    declareStreams(connection); // the same stream names in both accounts
                }
            }
            for (String admission : List.of("admission", "lab2-admission", "lab2-admission")) {
                try (Connection connection = Nats.connect(as.apply(admission, secret.apply(admission)))) {
                    connection.jetStream().publish(Subjects.JOBS_QUEUED, "{}".getBytes(StandardCharsets.UTF_8));
                }
            }
            try (Connection gantry = Nats.connect(as.apply("admin", secret.apply("admin")));
                    Connection lab2 = Nats.connect(as.apply("lab2-admin", secret.apply("lab2-admin")))) {
                assertThat(gantry.jetStreamManagement().getStreamInfo(Subjects.JOBS_STREAM).getStreamState().getMsgCount()).isEqualTo(1);
                assertThat(lab2.jetStreamManagement().getStreamInfo(Subjects.JOBS_STREAM).getStreamState().getMsgCount()).isEqualTo(2);
            }
            assertThatThrownBy(() -> Nats.connect(as.apply("lab2-admission", secret.apply("admission"))).close())
                    .hasMessageContaining("Authorization Violation");
            assertThat(secret.apply("lab2-admission")).matches("[0-9a-f]{32}").isNotEqualTo(secret.apply("admission"));
        } finally {
            broker.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    @AfterAll
    static void stopBroker() throws Exception {
        if (server != null) {
            server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void passwordsAreRandomAndReadableOnlyByTheirOwner() throws IOException {
        for (String user : List.of("admission", "quota", "inventory", "placement", "admin")) {
            Path file = dir.resolve("credentials").resolve(user);
            assertThat(Files.getPosixFilePermissions(file)).containsExactlyInAnyOrder(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);
            // 128 bits, hex
            assertThat(password(user)).matches("[0-9a-f]{32}");
        }
        assertThat(password("admission")).isNotEqualTo(password("placement"));
    }

    /** infra.sh lists the subjects again (bash cannot read contracts): each one must be some service's to publish, once. */
    @Test
    void everySubjectOfTheContractsIsPublishedByExactlyOneServiceUser() throws IOException {
        String conf = Files.readString(dir.resolve("nats.conf"));
        for (String subject : Subjects.ALL) {
            int at = conf.indexOf('"' + subject + '"');
            assertThat(at).as(subject + " in no user's publish permissions").isNotNegative();
            assertThat(conf.indexOf('"' + subject + '"', at + 1)).as(subject + " publishable by two users").isNegative();
        }
    }

    @Test
    void aConnectionWithoutCredentialsIsRefused() {
        assertThatThrownBy(() -> Nats.connect(options().build()).close())
                .hasMessageContaining("Authorization Violation");
    }

    @Test
    void aWrongPasswordIsRefused() {
        assertThatThrownBy(() -> connect("admission", password("placement")).close())
                .hasMessageContaining("Authorization Violation");
        assertThatThrownBy(() -> connect("nobody", password("admin")).close())
                .hasMessageContaining("Authorization Violation");
    }

    @Test
    void admissionPublishesJobsIntoTheJobsStreamAndNothingElse() throws Exception {
        try (Connection admission = connect("admission", password("admission"))) {
            var js = admission.jetStream(JetStreamOptions.builder().requestTimeout(Duration.ofSeconds(2)).build());
            PublishAck ack = js.publish(Subjects.JOBS_QUEUED, "{}".getBytes(StandardCharsets.UTF_8));
            assertThat(ack.getStream()).isEqualTo(Subjects.JOBS_STREAM);
            assertThat(ack.getSeqno()).isPositive();
            // the broker drops what the user may not publish: no ack ever comes, the stream does not grow
            for (String forged : List.of(Subjects.PLACEMENTS_BOUND, Subjects.NODES_REMOVED, Subjects.QUOTA_SHARES)) {
                assertThatThrownBy(() -> js.publish(forged, "{}".getBytes(StandardCharsets.UTF_8),
                        PublishOptions.builder().streamTimeout(Duration.ofSeconds(1)).build()))
                        .as(forged).isInstanceOf(IOException.class);
            }
        }
        try (Connection admin = connect("admin", password("admin"))) {
            JetStreamManagement jsm = admin.jetStreamManagement();
            assertThat(jsm.getStreamInfo(Subjects.PLACEMENTS_STREAM).getStreamState().getMsgCount()).isZero();
            assertThat(jsm.getStreamInfo(Subjects.NODES_STREAM).getStreamState().getMsgCount()).isZero();
            assertThat(jsm.getStreamInfo(Subjects.JOBS_STREAM).getStreamState().getMsgCount()).isPositive();
        }
        assertThat(Files.readString(dir.resolve("nats.log")))
                .contains("Publish Violation - User \"admission\", Subject \"placements.bound\"");
    }

    @Test
    void aServiceCannotDeleteOrPurgeAStreamNorReadOneItDoesNotConsume() throws Exception {
        for (String user : List.of("admission", "quota", "inventory", "placement")) {
            try (Connection service = connect(user, password(user))) {
                JetStreamManagement jsm = service.jetStreamManagement(
                        JetStreamOptions.builder().requestTimeout(Duration.ofSeconds(1)).build());
                assertThatThrownBy(() -> jsm.deleteStream(Subjects.JOBS_STREAM)).as(user).isInstanceOf(IOException.class);
                assertThatThrownBy(() -> jsm.purgeStream(Subjects.PLACEMENTS_STREAM)).as(user).isInstanceOf(IOException.class);
                // the stream's data subjects are not theirs to subscribe to: only their inbox
                service.subscribe(Subjects.JOBS_QUEUED);
                service.flush(Duration.ofSeconds(1));
            }
        }
        // inventory consumes no stream: it may not create a consumer on JOBS
        try (Connection inventory = connect("inventory", password("inventory"))) {
            JetStreamManagement jsm = inventory.jetStreamManagement(JetStreamOptions.builder().requestTimeout(Duration.ofSeconds(1)).build());
            assertThatThrownBy(() -> jsm.addOrUpdateConsumer(Subjects.JOBS_STREAM,
                    io.nats.client.api.ConsumerConfiguration.builder().durable("snoop").build()))
                    .isInstanceOf(IOException.class);
        }
        try (Connection admin = connect("admin", password("admin"))) {
            assertThat(admin.jetStreamManagement().getStreamNames())
                    .contains(Subjects.JOBS_STREAM, Subjects.PLACEMENTS_STREAM);
        }
        String log = Files.readString(dir.resolve("nats.log"));
        assertThat(log).contains("Publish Violation - User \"quota\", Subject \"$JS.API.STREAM.DELETE.JOBS\"")
                .contains("Publish Violation - User \"placement\", Subject \"$JS.API.STREAM.PURGE.PLACEMENTS\"")
                .contains("Subscription Violation - User \"admission\", Subject \"jobs.queued\"");
    }

    private static Options.Builder options() {
        return new Options.Builder().server("nats://127.0.0.1:" + port).maxReconnects(0)
                .connectionTimeout(Duration.ofSeconds(2)).errorListener(new io.nats.client.ErrorListener() {
                });
    }

    private static Connection connect(String user, String password) throws IOException, InterruptedException {
        return Nats.connect(options().userInfo(user, password).build());
    }

    private static String password(String user) {
        try {
            return Files.readString(dir.resolve("credentials").resolve(user)).strip();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String natsServer() {
        for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (!d.isBlank() && Files.isExecutable(Path.of(d, "nats-server"))) {
                return Path.of(d, "nats-server").toString();
            }
        }
        return "/usr/sbin/nats-server";
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
