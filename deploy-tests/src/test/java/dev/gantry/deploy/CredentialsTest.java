package dev.gantry.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretKeySelector;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Who logs in as whom (issue 19, items 3 and 8): each service reads its own database user and its own broker
 * user from Secrets of its own, never a shared or superuser one; the development PostgreSQL creates one owner per
 * database from the same Secrets; the development NATS requires authentication, with exactly the users and
 * permissions bin/lib/infra.sh defines (generated into deploy/k8s/nats by generate.sh).
 */
class CredentialsTest {

    /** Deployment -> the user it logs in as (the broker's and the database's). */
    static final Map<String, String> USER_OF = Map.of("admission-service", "admission", "quota-service", "quota",
            "node-inventory-service", "inventory", "placement-service", "placement");
    static final Set<String> NATS_USERS = Set.of("admission", "quota", "inventory", "placement", "admin");

    @ParameterizedTest
    @ValueSource(strings = {"base", "overlays/dev", "overlays/prod"})
    void every_service_connects_to_nats_as_its_own_user_from_its_own_secret(String dir) {
        Set<String> secrets = new HashSet<>();
        for (Deployment deployment : Manifests.all(dir, Deployment.class)) {
            String name = deployment.getMetadata().getName();
            String user = USER_OF.get(name);
            Container container = RenderedManifestsTest.onlyContainer(deployment.getSpec().getTemplate().getSpec());
            assertThat(secretRef(container, "GANTRY_NATS_USERNAME")).as(name).isEqualTo("gantry-nats-" + user + "/username");
            assertThat(secretRef(container, "GANTRY_NATS_PASSWORD")).as(name).isEqualTo("gantry-nats-" + user + "/password");
            secrets.add("gantry-nats-" + user);
            if (dir.equals("overlays/dev")) {
                assertThat(secretData(dir, "gantry-nats-" + user)).as(name).containsEntry("username", user).containsKey("password");
            }
        }
        assertThat(secrets).as("one Secret per service").hasSize(4);
    }

    @ParameterizedTest
    @ValueSource(strings = {"base", "overlays/dev", "overlays/prod"})
    void every_service_logs_in_to_postgresql_as_its_own_user_from_its_own_secret(String dir) {
        Map<String, String> userSecretOf = new LinkedHashMap<>();
        for (Deployment deployment : Manifests.all(dir, Deployment.class)) {
            String name = deployment.getMetadata().getName();
            String user = USER_OF.get(name);
            Container container = RenderedManifestsTest.onlyContainer(deployment.getSpec().getTemplate().getSpec());
            assertThat(secretRef(container, "GANTRY_DB_USER")).as(name).isEqualTo("gantry-db-" + user + "/username");
            assertThat(secretRef(container, "GANTRY_DB_PASSWORD")).as(name).isEqualTo("gantry-db-" + user + "/password");
            // nothing else may bring database credentials in: no Secret as a whole in the environment
            assertThat(container.getEnvFrom()).as(name).noneMatch(source -> source.getSecretRef() != null);
            userSecretOf.put(name, secretRef(container, "GANTRY_DB_USER"));
            if (dir.equals("overlays/dev")) {
                assertThat(secretData(dir, "gantry-db-" + user)).as(name).containsEntry("username", user).containsKey("password");
            }
        }
        assertThat(new HashSet<>(userSecretOf.values())).as("no two services share a database user: " + userSecretOf).hasSize(4);
        if (dir.equals("overlays/dev")) {
            List<String> usernames = USER_OF.values().stream().map(u -> secretData(dir, "gantry-db-" + u).get("username")).toList();
            assertThat(new HashSet<>(usernames)).hasSize(4);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"base", "overlays/dev", "overlays/prod"})
    void a_service_references_no_secret_but_its_own(String dir) {
        for (Deployment deployment : Manifests.all(dir, Deployment.class)) {
            String name = deployment.getMetadata().getName();
            String user = USER_OF.get(name);
            Set<String> own = new HashSet<>(Set.of("gantry-db-" + user, "gantry-nats-" + user));
            if (name.equals("admission-service")) {
                own.add("gantry-jwt-signing"); // the key its service tokens are signed with
            }
            assertThat(secretsReferenced(deployment.getSpec().getTemplate().getSpec())).as(name).isSubsetOf(own);
        }
    }

    @Test
    void no_deployment_references_the_database_superuser_secret() {
        String dir = "overlays/dev";
        Container postgres = RenderedManifestsTest.onlyContainer(
                Manifests.named(dir, StatefulSet.class, "postgresql").getSpec().getTemplate().getSpec());
        String user = secretRef(postgres, "POSTGRES_USER");
        String password = secretRef(postgres, "POSTGRES_PASSWORD");
        assertThat(user).isEqualTo("postgresql-superuser/username");
        assertThat(password).isEqualTo("postgresql-superuser/password");
        Set<String> superuserSecrets = new HashSet<>(List.of(user.split("/")[0], password.split("/")[0]));
        for (Deployment deployment : Manifests.all(dir, Deployment.class)) {
            assertThat(secretsReferenced(deployment.getSpec().getTemplate().getSpec())).as(deployment.getMetadata().getName())
                    .doesNotContainAnyElementsOf(superuserSecrets);
        }
        // and the superuser is not one of the services' users
        String superuser = secretData(dir, "postgresql-superuser").get("username");
        assertThat(USER_OF.values().stream().map(u -> secretData(dir, "gantry-db-" + u).get("username"))).doesNotContain(superuser);
    }

    @Test
    void dev_postgresql_creates_one_role_per_service_owning_only_its_database() throws IOException {
        String dir = "overlays/dev";
        String init = Manifests.named(dir, ConfigMap.class, "postgresql-init").getData().get("init-databases.sql");
        Container postgres = RenderedManifestsTest.onlyContainer(
                Manifests.named(dir, StatefulSet.class, "postgresql").getSpec().getTemplate().getSpec());
        Map<String, String> modules = Map.of("admission", "admission-service", "quota", "quota-service",
                "inventory", "node-inventory-service", "placement", "placement-service/app");
        for (var entry : modules.entrySet()) {
            String user = entry.getKey();
            String upper = user.toUpperCase();
            // the database each service names (gantry.db.name) is the one its role owns
            String database = databaseOf(entry.getValue());
            assertThat(init).as(user)
                    .contains("\\getenv " + user + "_user GANTRY_DB_USER_" + upper + "\n")
                    .contains("\\getenv " + user + "_password GANTRY_DB_PASSWORD_" + upper + "\n")
                    .contains("CREATE ROLE :\"" + user + "_user\" LOGIN PASSWORD :'" + user + "_password';")
                    .contains("CREATE DATABASE " + database + " OWNER :\"" + user + "_user\";")
                    .contains("REVOKE ALL ON DATABASE " + database + " FROM PUBLIC;");
            // PostgreSQL's first start reads them from the very Secret the service logs in with
            assertThat(secretRef(postgres, "GANTRY_DB_USER_" + upper)).isEqualTo("gantry-db-" + user + "/username");
            assertThat(secretRef(postgres, "GANTRY_DB_PASSWORD_" + upper)).isEqualTo("gantry-db-" + user + "/password");
        }
        // four roles, four databases, none a superuser or allowed to create databases
        assertThat(Pattern.compile("CREATE ROLE ").matcher(init).results().count()).isEqualTo(4);
        assertThat(Pattern.compile("CREATE DATABASE ").matcher(init).results().count()).isEqualTo(4);
        String statements = init.lines().filter(l -> !l.startsWith("--")).collect(java.util.stream.Collectors.joining("\n"));
        assertThat(statements).doesNotContainIgnoringCase("SUPERUSER").doesNotContainIgnoringCase("CREATEDB")
                .doesNotContainIgnoringCase("CREATEROLE").doesNotContainIgnoringCase("GRANT ");
    }

    @Test
    void dev_nats_requires_authentication_with_exactly_the_four_service_users_and_admin() {
        String dir = "overlays/dev";
        PodSpec pod = Manifests.named(dir, StatefulSet.class, "nats").getSpec().getTemplate().getSpec();
        Container nats = RenderedManifestsTest.onlyContainer(pod);
        assertThat(nats.getArgs()).containsExactly("--config", "/etc/nats/nats.conf");
        assertThat(nats.getVolumeMounts()).anySatisfy(m -> {
            assertThat(m.getMountPath()).isEqualTo("/etc/nats");
            Volume volume = pod.getVolumes().stream().filter(v -> v.getName().equals(m.getName())).findFirst().orElseThrow();
            assertThat(volume.getProjected().getSources()).extracting(s -> s.getConfigMap().getName())
                    .containsExactlyInAnyOrder("nats-config", "gantry-nats-accounts");
        });
        String server = Manifests.named(dir, ConfigMap.class, "nats-config").getData().get("nats.conf");
        String accounts = Manifests.named(dir, ConfigMap.class, "gantry-nats-accounts").getData().get("gantry-accounts.conf");
        assertThat(server).contains("include ./gantry-accounts.conf").contains("jetstream");
        // no way in without a user: no anonymous default user, no shared token, no second user list
        for (String config : List.of(server, accounts)) {
            assertThat(config).doesNotContain("no_auth_user").doesNotContain("authorization").doesNotContain("token");
        }
        Map<String, String> passwords = users(accounts);
        assertThat(passwords.keySet()).containsExactlyInAnyOrderElementsOf(NATS_USERS);
        for (String user : NATS_USERS) {
            String variable = "GANTRY_NATS_PASSWORD_" + user.toUpperCase();
            assertThat(passwords.get(user)).as(user).isEqualTo("$" + variable);
            // the server reads each password from the Secret that user's service reads it from
            assertThat(secretRef(nats, variable)).isEqualTo("gantry-nats-" + user + "/password");
            assertThat(secretData(dir, "gantry-nats-" + user)).containsEntry("username", user);
        }
        // every service user is limited; admin alone has no permissions block
        for (String user : USER_OF.values()) {
            assertThat(userEntry(accounts, user)).as(user).contains("permissions: {").contains("subscribe: { allow: [\"_INBOX.>\"] }");
        }
        assertThat(userEntry(accounts, "admin")).doesNotContain("permissions");
    }

    @Test
    void the_committed_nats_accounts_are_what_generate_writes_from_infra_sh() throws Exception {
        Path committed = Kustomize.k8s("nats").resolve("gantry-accounts.conf");
        String generated = run(List.of("bash", Kustomize.k8s("generate.sh").toString(), "nats", "--print"), Map.of());
        assertThat(Files.readString(committed)).as("deploy/k8s/nats/gantry-accounts.conf is stale: run deploy/k8s/generate.sh nats")
                .isEqualTo(generated);
        // and it is what the dev overlay deploys
        assertThat(Manifests.named("overlays/dev", ConfigMap.class, "gantry-nats-accounts").getData().get("gantry-accounts.conf"))
                .isEqualTo(generated);
    }

    /**
     * The dev overlay's NATS configuration, run by a real nats-server (bin/lib/infra.sh ensure_nats installs it) with
     * the dev Secrets' passwords in its environment: a client without credentials is refused, each service's user from
     * its Secret is let in, and quota may not publish admission's jobs.queued.
     */
    @Test
    void the_dev_nats_configuration_runs_and_refuses_anonymous_clients() throws Exception {
        String dir = "overlays/dev";
        Path conf = Files.createTempDirectory("gantry-nats-conf");
        int port = freePort();
        String server = Manifests.named(dir, ConfigMap.class, "nats-config").getData().get("nats.conf")
                .replace("port: 4222", "port: " + port).replaceAll("http_port: \\d+\n", "")
                .replace("\"/data\"", "\"" + conf.resolve("store") + "\"");
        Files.writeString(conf.resolve("nats.conf"), server);
        Files.writeString(conf.resolve("gantry-accounts.conf"),
                Manifests.named(dir, ConfigMap.class, "gantry-nats-accounts").getData().get("gantry-accounts.conf"));
        ProcessBuilder builder = new ProcessBuilder(natsServer(), "-c", conf.resolve("nats.conf").toString())
                .redirectErrorStream(true).redirectOutput(conf.resolve("server.log").toFile());
        for (String user : NATS_USERS) {
            builder.environment().put("GANTRY_NATS_PASSWORD_" + user.toUpperCase(), secretData(dir, "gantry-nats-" + user).get("password"));
        }
        Process process = builder.start();
        try {
            awaitPort(port, process, conf.resolve("server.log"));
            assertThat(NatsProbe.greeting(port)).contains("\"auth_required\":true");
            assertThat(NatsProbe.exchange(port, "CONNECT {\"verbose\":false}\r\nPING\r\n")).contains("-ERR 'Authorization Violation'")
                    .doesNotContain("PONG");
            for (String user : NATS_USERS) {
                Map<String, String> secret = secretData(dir, "gantry-nats-" + user);
                assertThat(NatsProbe.exchange(port, NatsProbe.connect(secret.get("username"), secret.get("password")) + "PING\r\n"))
                        .as(user).contains("PONG").doesNotContain("-ERR");
            }
            assertThat(NatsProbe.exchange(port, NatsProbe.connect("quota", "wrong") + "PING\r\n")).contains("Authorization Violation");
            Map<String, String> quota = secretData(dir, "gantry-nats-quota");
            assertThat(NatsProbe.exchange(port, NatsProbe.connect("quota", quota.get("password"))
                    + "PUB jobs.queued 2\r\nhi\r\nPUB quota.shares 2\r\nhi\r\nPING\r\n"))
                    .contains("Permissions Violation for Publish to \"jobs.queued\"")
                    .doesNotContain("Permissions Violation for Publish to \"quota.shares\"").contains("PONG");
        } finally {
            process.destroy();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    // ------------------------------------------------------------------------------------------ helpers

    /** "secret/key" of an env var set from a Secret's key; null when the variable is not so set. */
    static String secretRef(Container container, String variable) {
        EnvVar env = container.getEnv().stream().filter(e -> e.getName().equals(variable)).findFirst()
                .orElseThrow(() -> new AssertionError(container.getName() + " has no " + variable));
        assertThat(env.getValue()).as(variable + " must come from a Secret, not a literal").isNull();
        SecretKeySelector ref = env.getValueFrom() == null ? null : env.getValueFrom().getSecretKeyRef();
        assertThat(ref).as(container.getName() + " " + variable + " from a Secret").isNotNull();
        return ref.getName() + "/" + ref.getKey();
    }

    /** Every Secret a pod names: in env values, whole in envFrom, or as a volume. */
    static Set<String> secretsReferenced(PodSpec pod) {
        Set<String> names = new HashSet<>();
        for (Container container : pod.getContainers()) {
            for (EnvVar env : container.getEnv()) {
                if (env.getValueFrom() != null && env.getValueFrom().getSecretKeyRef() != null) {
                    names.add(env.getValueFrom().getSecretKeyRef().getName());
                }
            }
            container.getEnvFrom().stream().filter(s -> s.getSecretRef() != null).forEach(s -> names.add(s.getSecretRef().getName()));
        }
        pod.getVolumes().stream().filter(v -> v.getSecret() != null).forEach(v -> names.add(v.getSecret().getSecretName()));
        return names;
    }

    static Map<String, String> secretData(String dir, String name) {
        Secret secret = Manifests.named(dir, Secret.class, name);
        Map<String, String> decoded = new LinkedHashMap<>();
        if (secret.getData() != null) {
            secret.getData().forEach((k, v) -> decoded.put(k, new String(Base64.getDecoder().decode(v), StandardCharsets.UTF_8)));
        }
        if (secret.getStringData() != null) {
            decoded.putAll(secret.getStringData());
        }
        return decoded;
    }

    /** user -> password expression of every user in a nats-server accounts block. */
    private static Map<String, String> users(String accounts) {
        Map<String, String> users = new LinkedHashMap<>();
        Matcher m = Pattern.compile("\\{ user: \"([^\"]+)\", password: ([^,\\s}]+)").matcher(accounts);
        while (m.find()) {
            assertThat(users.put(m.group(1), m.group(2))).as("user " + m.group(1) + " twice").isNull();
        }
        return users;
    }

    /** The text of one user's entry, from its "{ user:" to the next user's. */
    private static String userEntry(String accounts, String user) {
        int start = accounts.indexOf("{ user: \"" + user + "\"");
        assertThat(start).as(user).isNotNegative();
        int next = accounts.indexOf("{ user: \"", start + 1);
        return accounts.substring(start, next < 0 ? accounts.length() : next);
    }

    private static String databaseOf(String module) throws IOException {
        Path properties = Kustomize.root().resolve(module).resolve("src/main/resources/application.properties");
        return Files.readAllLines(properties).stream().filter(l -> l.startsWith("gantry.db.name="))
                .map(l -> l.substring("gantry.db.name=".length()).strip()).findFirst().orElseThrow();
    }

    private static String natsServer() {
        for (String candidate : List.of("/usr/sbin/nats-server", "/usr/bin/nats-server")) {
            if (Files.isExecutable(Path.of(candidate))) {
                return candidate;
            }
        }
        return "nats-server"; // on the PATH, else the start fails naming it
    }

    private static int freePort() throws IOException {
        try (var socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private static void awaitPort(int port, Process process, Path log) throws Exception {
        for (int i = 0; i < 100; i++) {
            if (!process.isAlive()) {
                throw new AssertionError("nats-server exited: " + Files.readString(log));
            }
            try (var socket = new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), port)) {
                return;
            } catch (IOException notYet) {
                Thread.sleep(100);
            }
        }
        throw new AssertionError("nats-server did not listen on " + port + ": " + Files.readString(log));
    }

    private static String run(List<String> command, Map<String, String> environment) throws Exception {
        Path out = Files.createTempFile("generate", ".out");
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile());
        builder.environment().putAll(environment);
        Process process = builder.start();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String output = Files.readString(out);
        Files.delete(out);
        assertThat(process.exitValue()).as(command + ": " + output).isZero();
        return output;
    }

    /** NATS's text protocol over a plain socket: enough to see whether the server lets a client in. */
    static final class NatsProbe {

        static String connect(String user, String password) {
            return "CONNECT {\"verbose\":false,\"user\":\"" + user + "\",\"pass\":\"" + password + "\"}\r\n";
        }

        /** The INFO line the server greets a client with. */
        static String greeting(int port) throws IOException {
            try (var socket = new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), port)) {
                socket.setSoTimeout(3000);
                return line(socket.getInputStream());
            }
        }

        /** Sends {@code commands} after the server's INFO and returns what it answers within a second. */
        static String exchange(int port, String commands) throws IOException {
            try (var socket = new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), port)) {
                socket.setSoTimeout(1000);
                var in = socket.getInputStream();
                line(in); // INFO
                socket.getOutputStream().write(commands.getBytes(StandardCharsets.UTF_8));
                socket.getOutputStream().flush();
                StringBuilder answer = new StringBuilder();
                try {
                    for (String l = line(in); l != null; l = line(in)) {
                        answer.append(l).append('\n');
                        if (l.equals("PONG") || l.startsWith("-ERR 'Authorization")) {
                            break;
                        }
                    }
                } catch (java.net.SocketTimeoutException | java.net.SocketException closed) {
                    // the server closed or said nothing more
                }
                return answer.toString();
            }
        }

        private static String line(java.io.InputStream in) throws IOException {
            StringBuilder line = new StringBuilder();
            for (int c = in.read(); c != -1; c = in.read()) {
                if (c == '\n') {
                    return line.toString().replace("\r", "");
                }
                line.append((char) c);
            }
            return line.isEmpty() ? null : line.toString();
        }
    }
}
