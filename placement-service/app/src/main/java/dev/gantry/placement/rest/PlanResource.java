package dev.gantry.placement.rest;

import dev.gantry.kit.problem.InvalidRequestException;
import dev.gantry.kit.problem.Problem;
import dev.gantry.kit.security.GantryRoles;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.json.PlanCodec;
import dev.gantry.placement.engine.json.ScenarioCodec;
import dev.gantry.placement.engine.json.ScenarioValidationException;
import dev.gantry.placement.engine.planner.Planner;
import dev.gantry.placement.engine.planner.Planners;
import dev.gantry.placement.engine.planner.SolverProfile;
import io.smallrye.common.annotation.Blocking;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.time.Duration;
import java.util.List;

/**
 * Dry-run planning: a scenario in ({@code gantry-scenario/v1}), its plan out ({@code gantry-plan/v1}),
 * exactly what {@code bin/gantry plan} prints. Nothing is stored and nothing is bound.
 */
@Path("/v1/plans")
public class PlanResource {

    /** A dry run may think as long as the thorough profile, no longer. */
    static final Duration MAX_TIME_LIMIT = Duration.ofSeconds(30);

    @POST
    @Blocking // planning takes a core for up to the time limit: never on the event loop
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @RolesAllowed({GantryRoles.ADMIN})
    public String plan(String scenarioJson,
            @QueryParam("planner") @DefaultValue(Planners.DEFAULT) String plannerName,
            @QueryParam("profile") @DefaultValue("fast") String profileName,
            @QueryParam("timeLimit") String timeLimit) {
        Planner planner;
        SolverProfile profile;
        try {
            planner = Planners.byName(plannerName);
        } catch (IllegalArgumentException e) {
            throw InvalidRequestException.badRequest("planner", "must be one of " + Planners.NAMES);
        }
        try {
            profile = SolverProfile.byName(profileName);
        } catch (IllegalArgumentException e) {
            throw InvalidRequestException.badRequest("profile", "must be one of fast, balanced, thorough");
        }
        if (timeLimit != null) {
            Duration limit;
            try {
                limit = SolverProfile.parseDuration(timeLimit);
            } catch (IllegalArgumentException e) {
                throw InvalidRequestException.badRequest("timeLimit", "not a duration such as 500ms or 2s");
            }
            if (limit.isNegative() || limit.isZero() || limit.compareTo(MAX_TIME_LIMIT) > 0) {
                throw InvalidRequestException.badRequest("timeLimit", "must be more than 0 and at most 30s");
            }
            profile = profile.withTimeLimit(limit);
        }
        Scenario scenario;
        try {
            scenario = ScenarioCodec.read(scenarioJson);
        } catch (ScenarioValidationException e) {
            List<Problem.FieldError> errors = e.violations().stream()
                    .map(v -> new Problem.FieldError(v.field(), v.message()))
                    .toList();
            boolean malformed = errors.stream().anyMatch(f -> f.message().startsWith("not valid JSON"));
            throw new InvalidRequestException(malformed ? 400 : 422,
                    errors.isEmpty() ? "invalid scenario" : errors.getFirst().field() + ": " + errors.getFirst().message(), errors);
        }
        Plan plan = planner.plan(scenario, profile);
        return PlanCodec.write(plan);
    }
}
