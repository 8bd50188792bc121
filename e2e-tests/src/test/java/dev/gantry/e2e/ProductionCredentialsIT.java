package dev.gantry.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The packaged services (the production profile, as a jar or a native image runs) have no default database
 * credentials: started without GANTRY_DB_USER / GANTRY_DB_PASSWORD each stops at once, before it connects to
 * anything, exits non-zero and says which variable is missing (service-kit's RequiredDatabaseCredentials).
 * Needs neither PostgreSQL nor NATS: nothing gets that far.
 */
class ProductionCredentialsIT {

    private static final Map<String, String> MODULES = Map.of("admission-service", "admission-service", "quota-service",
            "quota-service", "node-inventory-service", "node-inventory-service", "placement-service", "placement-service/app");

    @ParameterizedTest
    @ValueSource(strings = {"admission-service", "quota-service", "node-inventory-service", "placement-service"})
    void withoutDatabaseCredentialsAPackagedServiceRefusesToStartNamingTheVariables(String service) throws Exception {
        Result none = start(service, Map.of());
        assertThat(none.exit()).as(service + " output:\n" + none.output()).isNotZero();
        assertThat(none.output()).contains("GANTRY_DB_USER is not set: ").contains("GANTRY_DB_PASSWORD is not set: ")
                .contains("set GANTRY_DB_USER and GANTRY_DB_PASSWORD")
                // stopped while reading its configuration: it never tried the database or the broker
                .doesNotContain("Flyway").doesNotContain("Unable to connect to NATS");
    }

    @ParameterizedTest
    @ValueSource(strings = {"quota-service"})
    void aUserWithoutAPasswordIsRefusedToo(String service) throws Exception {
        Result userOnly = start(service, Map.of("GANTRY_DB_USER", "quota"));
        assertThat(userOnly.exit()).isNotZero();
        assertThat(userOnly.output()).contains("GANTRY_DB_PASSWORD is not set: ").doesNotContain("GANTRY_DB_USER is not set");
    }

    private record Result(int exit, String output) {
    }

    private static Result start(String service, Map<String, String> environment) throws Exception {
        Path root = Path.of(System.getProperty("gantry.root", ".."));
        Path jar = root.resolve(MODULES.get(service)).resolve("target/quarkus-app/quarkus-run.jar");
        assertThat(jar).as("packaged " + service + " (mvn verify from the repository root)").exists();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Path log = Files.createTempFile("no-credentials-" + service, ".log");
        ProcessBuilder builder = new ProcessBuilder(List.of(java, "-Dquarkus.http.port=0",
                "-Dgantry.db.name=gantry_e2e_no_credentials", "-Dgantry.nats.url=nats://127.0.0.1:1",
                "-Dquarkus.log.console.json.enabled=false", "-jar", jar.toString()))
                .redirectErrorStream(true).redirectOutput(log.toFile());
        // whatever the machine's environment says, this start has only what the test gives it
        builder.environment().remove("GANTRY_DB_USER");
        builder.environment().remove("GANTRY_DB_PASSWORD");
        builder.environment().putAll(environment);
        Process process = builder.start();
        try {
            assertThat(process.waitFor(90, TimeUnit.SECONDS)).as(service + " still running after 90 s").isTrue();
            return new Result(process.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
        } finally {
            process.destroyForcibly();
            Files.deleteIfExists(log);
        }
    }
}
