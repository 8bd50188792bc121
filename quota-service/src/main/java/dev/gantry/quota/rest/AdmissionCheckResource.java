package dev.gantry.quota.rest;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.gantry.kit.security.GantryRoles;
import dev.gantry.quota.domain.AdmissionPolicy;
import dev.gantry.quota.domain.PriorityClassSpec;
import dev.gantry.quota.domain.QueueTree;
import dev.gantry.quota.persistence.UserLimitEntity;
import dev.gantry.quota.service.QuotaStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.PositiveOrZero;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * May this job enter this queue? Always 200 with {@code allowed} true or false: a rejection is an
 * answer, not an error. 400 only when the question itself is malformed.
 */
@Path("/v1/admission-checks")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class AdmissionCheckResource {

    @Inject
    QuotaStore store;

    @Inject
    MeterRegistry registry;

    public record JobResources(@NotNull @PositiveOrZero Integer gpus, String gpuModel, @PositiveOrZero Long cpuMillis,
            @PositiveOrZero Long memoryMiB) {
    }

    /** {@code team} and {@code teams} are merged: the user's teams, for queue membership. */
    public record AdmissionCheckRequest(@NotBlank String user, String team, List<@NotNull String> teams, @NotBlank String queue,
            @Valid @NotNull JobResources resources, String priorityClass,
            @Min(-PriorityClassSpec.MAX_USER_VALUE) @Max(PriorityClassSpec.MAX_USER_VALUE) Integer priority) {
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record AdmissionCheckResponse(boolean allowed, String reason, String message, String priorityClass, Integer priority,
            String preemptionPolicy) {
    }

    @POST
    @RolesAllowed({GantryRoles.SERVICE, GantryRoles.ADMIN})
    public Uni<AdmissionCheckResponse> check(@Valid @NotNull AdmissionCheckRequest body) {
        List<String> teams = new ArrayList<>();
        if (body.team() != null && !body.team().isBlank()) {
            teams.add(body.team());
        }
        if (body.teams() != null) {
            body.teams().stream().filter(t -> !teams.contains(t)).forEach(teams::add);
        }
        JobResources r = body.resources();
        AdmissionPolicy.Request request = new AdmissionPolicy.Request(body.user(), teams, body.queue(), r.gpus(), r.gpuModel(),
                r.cpuMillis() == null ? 0 : r.cpuMillis(), r.memoryMiB() == null ? 0 : r.memoryMiB(), body.priorityClass(), body.priority());
        // two aggregates instead of every allocation and pending row as entities: the check's cost must not grow with
        // the number of jobs running (a burst of submissions made each check read thousands of rows)
        return Panache.withSession(() -> store.allQueues()
                .chain(queues -> store.allPriorityClasses()
                        .chain(classes -> UserLimitEntity.<UserLimitEntity>findById(body.user())
                                .chain(limits -> sumsByQueue("select queue, sum(gpus) from allocation group by queue", null)
                                        .chain(running -> sumsByQueue(
                                                "select queue, count(*) from pending_job where owner = ?1 group by queue", body.user())
                                                .map(pendingByQueue -> {
                                                    Map<String, PriorityClassSpec> byName = classes.stream()
                                                            .collect(Collectors.toMap(PriorityClassSpec::name, Function.identity()));
                                                    return new AdmissionPolicy.Context(new QueueTree(queues), byName,
                                                            Optional.ofNullable(limits).map(UserLimitEntity::toSpec), running,
                                                            pendingByQueue);
                                                }))))))
                .map(context -> respond(AdmissionPolicy.check(request, context)));
    }

    /** queue -> a number, by a grouped query with at most one parameter. */
    private static Uni<Map<String, Long>> sumsByQueue(String sql, String parameter) {
        return Panache.getSession().chain(session -> {
            var query = session.createNativeQuery(sql, Object[].class);
            if (parameter != null) {
                query.setParameter(1, parameter);
            }
            return query.getResultList();
        }).map(rows -> {
            Map<String, Long> byQueue = new HashMap<>();
            rows.forEach(row -> byQueue.put((String) row[0], ((Number) row[1]).longValue()));
            return byQueue;
        });
    }

    private AdmissionCheckResponse respond(AdmissionPolicy.Decision decision) {
        return switch (decision) {
            case AdmissionPolicy.Allowed allowed -> {
                registry.counter("gantry.quota.admission.checks", "outcome", "allowed").increment();
                PriorityClassSpec pc = allowed.priorityClass();
                yield new AdmissionCheckResponse(true, null, null, pc == null ? null : pc.name(), allowed.priority(),
                        pc == null ? null : pc.preemptionPolicy().name());
            }
            case AdmissionPolicy.Rejected rejected -> {
                registry.counter("gantry.quota.admission.checks", "outcome", rejected.rejection().reason()).increment();
                yield new AdmissionCheckResponse(false, rejected.rejection().reason(), rejected.rejection().message(), null, null, null);
            }
        };
    }
}
