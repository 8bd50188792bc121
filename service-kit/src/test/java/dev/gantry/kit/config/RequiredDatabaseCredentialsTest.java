package dev.gantry.kit.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.smallrye.config.EnvConfigSource;
import io.smallrye.config.Expressions;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.io.IOException;
import java.net.URL;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * service-kit's shipped defaults (META-INF/microprofile-config.properties) read as Quarkus reads them: with the
 * interceptors found through META-INF/services, the environment above the file, under one profile.
 */
class RequiredDatabaseCredentialsTest {

    private static SmallRyeConfig config(String profile, Map<String, String> environment) throws IOException {
        URL defaults = RequiredDatabaseCredentials.class.getClassLoader().getResource("META-INF/microprofile-config.properties");
        assertThat(defaults).isNotNull();
        return new SmallRyeConfigBuilder()
                .withProfile(profile)
                .addDefaultInterceptors()
                .addDiscoveredInterceptors()
                .withSources(new PropertiesConfigSource(defaults, 100))
                .withSources(new EnvConfigSource(environment, 300))
                .build();
    }

    @Test
    void theProductionProfileRefusesToStartWithoutCredentialsNamingBothVariablesInOneLine() throws IOException {
        SmallRyeConfig prod = config("prod", Map.of());
        // the datasource's user is optional to Quarkus: without the check it would silently be empty
        assertThatThrownBy(() -> prod.getOptionalValue("quarkus.datasource.username", String.class))
                .isInstanceOf(RequiredDatabaseCredentials.MissingDatabaseCredentialsException.class)
                .hasMessageStartingWith("GANTRY_DB_USER is not set: ")
                .hasMessageContaining("GANTRY_DB_USER and GANTRY_DB_PASSWORD")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
        assertThatThrownBy(() -> prod.getOptionalValue("quarkus.datasource.password", String.class))
                .hasMessageStartingWith("GANTRY_DB_PASSWORD is not set: ");
    }

    @Test
    void quarkusBuildReadingEveryPropertyWithoutExpansionIsNotStopped() throws IOException {
        SmallRyeConfig prod = config("prod", Map.of());
        // what BuildTimeConfigurationReader does at package time and before @QuarkusTest: the build must go on
        assertThat(Expressions.withoutExpansion(() -> prod.getConfigValue("gantry.db.password").getValue())).isNull();
        // the same lookup when the service runs is refused
        assertThatThrownBy(() -> prod.getConfigValue("gantry.db.password")).hasMessageStartingWith("GANTRY_DB_PASSWORD is not set: ");
    }

    @Test
    void aUserWithoutAPasswordOrABlankOneIsRefusedToo() throws IOException {
        SmallRyeConfig userOnly = config("prod", Map.of("GANTRY_DB_USER", "quota"));
        assertThat(userOnly.getValue("quarkus.datasource.username", String.class)).isEqualTo("quota");
        assertThatThrownBy(() -> userOnly.getOptionalValue("quarkus.datasource.password", String.class))
                .hasMessageStartingWith("GANTRY_DB_PASSWORD is not set: ");
        SmallRyeConfig blank = config("prod", Map.of("GANTRY_DB_USER", "quota", "GANTRY_DB_PASSWORD", "  "));
        assertThatThrownBy(() -> blank.getOptionalValue("quarkus.datasource.password", String.class))
                .hasMessageStartingWith("GANTRY_DB_PASSWORD is not set: ");
    }

    @Test
    void explicitCredentialsReachTheDatasourceAndNothingElseIsChecked() throws IOException {
        SmallRyeConfig prod = config("prod", Map.of("GANTRY_DB_USER", "admission", "GANTRY_DB_PASSWORD", "s3cret"));
        assertThat(prod.getValue("quarkus.datasource.username", String.class)).isEqualTo("admission");
        assertThat(prod.getValue("quarkus.datasource.password", String.class)).isEqualTo("s3cret");
        SmallRyeConfig without = config("prod", Map.of());
        assertThat(without.getValue("gantry.nats.url", String.class)).isEqualTo("nats://127.0.0.1:4222");
        assertThat(without.getOptionalValue("gantry.nats.username", String.class)).isEmpty();
    }

    @Test
    void devAndTestKeepTheLocalDevelopmentRoleUnlessTheEnvironmentNamesAnother() throws IOException {
        for (String profile : new String[] {"dev", "test"}) {
            SmallRyeConfig config = config(profile, Map.of());
            assertThat(config.getValue("quarkus.datasource.username", String.class)).as(profile).isEqualTo("gantry");
            assertThat(config.getValue("quarkus.datasource.password", String.class)).as(profile).isEqualTo("gantry");
        }
        SmallRyeConfig dev = config("dev", Map.of("GANTRY_DB_USER", "other", "GANTRY_DB_PASSWORD", "pw"));
        assertThat(dev.getValue("quarkus.datasource.username", String.class)).isEqualTo("other");
    }
}
