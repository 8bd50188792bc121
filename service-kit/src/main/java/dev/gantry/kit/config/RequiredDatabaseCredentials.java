package dev.gantry.kit.config;

import io.smallrye.config.ConfigSourceInterceptor;
import io.smallrye.config.ConfigSourceInterceptorContext;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.Expressions;
import io.smallrye.config.Priorities;
import jakarta.annotation.Priority;
import java.util.Map;

/**
 * No database credentials by default in production: {@code gantry.db.user} and
 * {@code gantry.db.password} have development defaults only in the {@code %dev} and {@code %test}
 * profiles (service-kit's {@code META-INF/microprofile-config.properties}), and whenever one of them is
 * looked up without a value (a packaged jar or native image started without {@code GANTRY_DB_USER} /
 * {@code GANTRY_DB_PASSWORD}), this stops the configuration with one line naming both variables.
 *
 * <p>Why a configuration interceptor and not a startup check: the datasource's user and password are
 * optional settings of Quarkus, so a missing one would silently become the operating-system user (JDBC)
 * or {@code user} (the reactive client), and Flyway connects with them before any startup observer of
 * the application runs. Expanding {@code quarkus.datasource.username=${gantry.db.user}} looks the value
 * up here first, when Quarkus reads its runtime configuration, before anything connects. Registered in
 * {@code META-INF/services/io.smallrye.config.ConfigSourceInterceptor}.
 */
@Priority(RequiredDatabaseCredentials.PRIORITY)
public final class RequiredDatabaseCredentials implements ConfigSourceInterceptor {

    /**
     * Between SmallRye's profile interceptor (LIBRARY + 200: the value this sees is the active profile's) and its
     * expression interceptor (LIBRARY + 300), so the lookups of {@code ${gantry.db.user}} that expanding the datasource's
     * settings makes pass here too; outside it, an expansion would never ask this interceptor.
     */
    static final int PRIORITY = Priorities.LIBRARY + 250;

    /** The property -> the environment variable that sets it. */
    static final Map<String, String> REQUIRED = Map.of("gantry.db.user", "GANTRY_DB_USER", "gantry.db.password", "GANTRY_DB_PASSWORD");

    @Override
    public ConfigValue getValue(ConfigSourceInterceptorContext context, String name) {
        ConfigValue value = context.proceed(name);
        String variable = REQUIRED.get(name);
        // Expressions off: Quarkus's build (packaging, and the augmentation before @QuarkusTest) reading every property
        // it finds, under any profile, to record it for run time; nothing connects then, so nothing is required yet
        if (variable != null && Expressions.isEnabled() && (value == null || value.getValue() == null || value.getValue().isBlank())) {
            throw new MissingDatabaseCredentialsException(variable);
        }
        return value;
    }

    /** What a service started without its database credentials says (one line). */
    public static final class MissingDatabaseCredentialsException extends IllegalStateException {

        MissingDatabaseCredentialsException(String variable) {
            super(message(variable));
        }

        static String message(String variable) {
            return variable + " is not set: Gantry has no default database credentials outside the dev and test profiles; "
                    + "set GANTRY_DB_USER and GANTRY_DB_PASSWORD to this service's own database user and password";
        }
    }
}
