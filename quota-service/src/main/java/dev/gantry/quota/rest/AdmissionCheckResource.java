package dev.gantry.quota.rest;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.gantry.kit.security.GantryRoles;
import dev.gantry.quota.domain.AdmissionPolicy;
import dev.gantry.quota.domain.PriorityClassSpec;
import dev.gantry.quota.service.AdmissionContexts;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.validation.Valid;
import jakarta.validation.Validator;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.PositiveOrZero;
import jakarta.validation.constraints.Size;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;

/**
 * May this job enter this queue? Always 200 with {@code allowed} true or false: a rejection is an
 * answer, not an error. 400 only when the question itself is malformed.
 */
@Path("/v1/admission-checks")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class AdmissionCheckResource {

    @Inject
    AdmissionContexts contexts;

    @Inject
    MeterRegistry registry;

    @Inject
    Validator validator;

    /** Most checks in one batch: what a burst of concurrent submissions gathers while one batch is answered. */
    public static final int MAX_BATCH = 500;

    public record JobResources(@NotNull @PositiveOrZero Integer gpus, String gpuModel, @PositiveOrZero Long cpuMillis,
            @PositiveOrZero Long memoryMiB) {
    }

    /**
     * {@code team} and {@code teams} are merged: the user's teams, for queue membership. {@code jobId}:
     * the id the job will be stored under; when given, an allowed check reserves the job's place among
     * the user's pending jobs until its {@code jobs.queued} arrives (a retry with the same id is not
     * counted against itself).
     */
    public record AdmissionCheckRequest(@NotBlank String user, String team, List<@NotNull String> teams, @NotBlank String queue,
            @Valid @NotNull JobResources resources, String priorityClass,
            @Min(-PriorityClassSpec.MAX_USER_VALUE) @Max(PriorityClassSpec.MAX_USER_VALUE) Integer priority, Boolean migratable,
            UUID jobId) {
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record AdmissionCheckResponse(boolean allowed, String reason, String message, String priorityClass, Integer priority,
            String preemptionPolicy) {
    }

    /** Several checks in one request, answered in order ({@link #checkAll}). */
    public record AdmissionCheckBatch(@NotNull @Size(min = 1, max = MAX_BATCH) List<AdmissionCheckRequest> checks) {
    }

    /** One check's answer in a batch: {@code status} 200 with the answer, or 400 and what is wrong with that check. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record BatchAnswer(int status, AdmissionCheckResponse answer, String detail) {
    }

    public record AdmissionCheckBatchResponse(List<BatchAnswer> results) {
    }

    /**
     * The checks admission gathered while its previous request was answered, in one request: a burst
     * of submissions then costs quota (and admission) one HTTP exchange per batch instead of one per job.
     * Each check is validated on its own (a malformed one is answered 400 in its place and changes
     * nothing for the others); the valid ones are decided in their order in one transaction, each as
     * {@link #check} would decide it after the ones before ({@link AdmissionContexts#decideAll}).
     */
    @POST
    @Path("/batch")
    @RolesAllowed({GantryRoles.SERVICE, GantryRoles.ADMIN})
    public Uni<AdmissionCheckBatchResponse> checkAll(@Valid @NotNull AdmissionCheckBatch batch) {
        BatchAnswer[] answers = new BatchAnswer[batch.checks().size()];
        List<Integer> valid = new ArrayList<>();
        List<AdmissionContexts.Check> checks = new ArrayList<>();
        for (int i = 0; i < answers.length; i++) {
            AdmissionCheckRequest request = batch.checks().get(i);
            String problem = request == null ? "a check must not be null" : violations(request);
            if (problem != null) {
                answers[i] = new BatchAnswer(400, null, problem);
            } else {
                valid.add(i);
                checks.add(new AdmissionContexts.Check(policyRequest(request), request.jobId()));
            }
        }
        Uni<List<AdmissionPolicy.Decision>> decisions = checks.isEmpty()
                ? Uni.createFrom().item(List.of())
                : contexts.decideAll(checks);
        return decisions.map(decided -> {
            for (int k = 0; k < decided.size(); k++) {
                answers[valid.get(k)] = new BatchAnswer(200, respond(decided.get(k)), null);
            }
            return new AdmissionCheckBatchResponse(List.of(answers));
        });
    }

    private String violations(AdmissionCheckRequest request) {
        var violations = validator.validate(request);
        if (violations.isEmpty()) {
            return null;
        }
        return violations.stream().sorted(Comparator.comparing(v -> v.getPropertyPath().toString()))
                .map(v -> v.getPropertyPath() + ": " + v.getMessage()).reduce((a, b) -> a + "; " + b).orElseThrow();
    }

    @POST
    @RolesAllowed({GantryRoles.SERVICE, GantryRoles.ADMIN})
    public Uni<AdmissionCheckResponse> check(@Valid @NotNull AdmissionCheckRequest body) {
        // a batch of one: one transaction that reads the user's limits and counts and, with the job's id, reserves
        // its place; the queue tree and priority classes from memory while unchanged
        return contexts.decide(policyRequest(body), body.jobId()).map(this::respond);
    }

    private static AdmissionPolicy.Request policyRequest(AdmissionCheckRequest body) {
        List<String> teams = new ArrayList<>();
        if (body.team() != null && !body.team().isBlank()) {
            teams.add(body.team());
        }
        if (body.teams() != null) {
            body.teams().stream().filter(t -> !teams.contains(t)).forEach(teams::add);
        }
        JobResources r = body.resources();
        return new AdmissionPolicy.Request(body.user(), teams, body.queue(), r.gpus(), r.gpuModel(),
                r.cpuMillis() == null ? 0 : r.cpuMillis(), r.memoryMiB() == null ? 0 : r.memoryMiB(), body.priorityClass(), body.priority(),
                Boolean.TRUE.equals(body.migratable()));
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
