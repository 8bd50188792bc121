package dev.gantry.admission.grpc;

import com.google.rpc.Code;
import dev.gantry.admission.forecast.StartTimes;
import dev.gantry.admission.JobAdmission;
import dev.gantry.admission.JobQuery;
import dev.gantry.admission.domain.Caller;
import dev.gantry.admission.domain.JobPlacement;
import dev.gantry.admission.domain.JobSpec;
import dev.gantry.admission.domain.JobState;
import dev.gantry.admission.domain.TaskGroupSpec;
import dev.gantry.admission.persistence.JobEntity;
import dev.gantry.admission.security.Callers;
import dev.gantry.admission.security.RequestLimits;
import dev.gantry.admission.streams.OpenStreams;
import dev.gantry.contracts.grpc.v1.CancelJobRequest;
import dev.gantry.contracts.grpc.v1.GetJobRequest;
import dev.gantry.contracts.grpc.v1.Job;
import dev.gantry.contracts.grpc.v1.JobService;
import dev.gantry.contracts.grpc.v1.ListJobsRequest;
import dev.gantry.contracts.grpc.v1.ListJobsResponse;
import dev.gantry.contracts.grpc.v1.Placement;
import dev.gantry.contracts.grpc.v1.SubmitJobRequest;
import dev.gantry.contracts.grpc.v1.TaskPlacement;
import dev.gantry.contracts.jobs.JobQueued.Network;
import dev.gantry.contracts.jobs.JobQueued.Toleration;
import io.quarkus.grpc.GrpcService;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import java.util.UUID;

/**
 * {@code gantry.v1.JobService}: REST's jobs API over gRPC, through the same {@link JobAdmission}.
 * Every call starts from {@link Callers#current()}, which refuses a call without a valid token
 * (UNAUTHENTICATED, as REST answers 401).
 */
@GrpcService
public class JobGrpcService implements JobService {

    private final JobAdmission admission;
    private final Callers callers;
    private final RequestLimits limits;
    private final OpenStreams streams;
    private final StartTimes startTimes;

    public JobGrpcService(JobAdmission admission, Callers callers, RequestLimits limits, OpenStreams streams, StartTimes startTimes) {
        this.streams = streams;
        this.startTimes = startTimes;
        this.admission = admission;
        this.callers = callers;
        this.limits = limits;
    }

    @Override
    public Uni<Job> submit(SubmitJobRequest request) {
        return guarded(() -> {
            Caller caller = callers.current();
            if (limits.overRate(caller.user()).isPresent()) {
                throw GrpcErrors.status(Code.RESOURCE_EXHAUSTED, "you are submitting faster than allowed; retry shortly", null);
            }
            if (!request.hasJob()) {
                throw GrpcErrors.status(Code.INVALID_ARGUMENT, "job: required", null);
            }
            String key = request.getIdempotencyKey().isEmpty() ? null : request.getIdempotencyKey();
            return admission.submit(toSpec(request.getJob()), caller, key).map(submitted -> toProto(submitted.job()));
        });
    }

    @Override
    public Uni<Job> get(GetJobRequest request) {
        return guarded(() -> {
            Caller caller = callers.current(); // who asks comes before what is asked: 401 before 400
            return admission.find(id(request.getId()), caller).chain(job -> startTimes.of(job, caller).map(f -> toProto(job, f)));
        });
    }

    @Override
    public Uni<ListJobsResponse> list(ListJobsRequest request) {
        return guarded(() -> {
            Caller caller = callers.current();
            int limit = request.getLimit() == 0 ? 50 : request.getLimit();
            if (limit < 1 || limit > 500) {
                throw GrpcErrors.status(Code.INVALID_ARGUMENT, "limit: must be 1..500", null);
            }
            JobState state = request.getState().isEmpty() ? null : JobState.valueOf(request.getState());
            JobQuery query = JobQuery.page(blankToNull(request.getQueue()), state, blankToNull(request.getUser()),
                    request.getCursor(), limit);
            return admission.list(query, caller).chain(jobs -> startTimes.of(jobs, caller).map(forecasts -> {
                String next = query.nextCursor(jobs);
                return ListJobsResponse.newBuilder()
                        .addAllJobs(jobs.stream().map(j -> toProto(j, forecasts.get(j.id))).toList())
                        .setNextCursor(next == null ? "" : next)
                        .build();
            }));
        });
    }

    @Override
    public Uni<Job> cancel(CancelJobRequest request) {
        return guarded(() -> {
            Caller caller = callers.current();
            return admission.cancel(id(request.getId()), caller).map(JobGrpcService::toProto);
        });
    }

    @Override
    public Multi<Job> watch(GetJobRequest request) {
        try {
            Caller caller = callers.current();
            UUID id = id(request.getId());
            // each update of a waiting job carries its start-time forecast, asked of placement as Get does
            return streams.open(caller, () -> admission.watch(id, caller)
                    .onItem().transformToUniAndConcatenate(job -> startTimes.of(job, caller).map(f -> toProto(job, f))))
                    .onFailure().transform(GrpcErrors::toStatus);
        } catch (RuntimeException e) {
            return Multi.createFrom().failure(GrpcErrors.toStatus(e));
        }
    }

    /** Runs a call, turning every failure (thrown or emitted) into the matching gRPC status. */
    private static <T> Uni<T> guarded(java.util.function.Supplier<Uni<T>> call) {
        try {
            return call.get().onFailure().transform(GrpcErrors::toStatus);
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(GrpcErrors.toStatus(e));
        }
    }

    private static UUID id(String text) {
        try {
            return UUID.fromString(text);
        } catch (IllegalArgumentException e) {
            throw GrpcErrors.status(Code.INVALID_ARGUMENT, "id: not a job id: '" + text + "'", null);
        }
    }

    private static String blankToNull(String text) {
        return text == null || text.isBlank() ? null : text;
    }

    static JobSpec toSpec(dev.gantry.contracts.grpc.v1.JobSpec job) {
        Network network = job.hasNetworkRequired() || job.hasNetworkPreferred()
                ? new Network(job.hasNetworkRequired() ? job.getNetworkRequired() : null,
                        job.hasNetworkPreferred() ? job.getNetworkPreferred() : null)
                : null;
        return new JobSpec(job.getName(), job.getQueue(), job.hasTeam() ? job.getTeam() : null,
                job.hasPriorityClassName() ? job.getPriorityClassName() : null, job.getPriority(),
                job.hasMinAvailable() ? job.getMinAvailable() : null,
                job.getTaskGroupsList().stream()
                        .map(g -> new TaskGroupSpec(g.getName(), g.getReplicas(), g.getGpusPerReplica(),
                                g.hasGpuMilli() ? g.getGpuMilli() : null, g.getCpuMillis(), g.getMemoryMib(),
                                g.getImage().isEmpty() ? null : g.getImage(), g.getCommandList(),
                                g.getWorkingDir().isEmpty() ? null : g.getWorkingDir(), g.getEnvMap(),
                                g.hasMigProfile() && !g.getMigProfile().isEmpty() ? g.getMigProfile() : null))
                        .toList(),
                job.getGpuModelsList(), job.hasGpuTopology() ? job.getGpuTopology() : null, network, job.getRequireInfiniband(),
                job.getNodeSelectorMap(),
                job.getTolerationsList().stream().map(t -> new Toleration(t.getKey(), t.hasValue() ? t.getValue() : null)).toList(),
                !job.hasPreemptible() || job.getPreemptible(), job.getCheckpointable(),
                job.hasCheckpointGraceSeconds() ? job.getCheckpointGraceSeconds() : null,
                job.hasEstimatedRuntimeSeconds() ? job.getEstimatedRuntimeSeconds() : null, job.getLabelsMap(),
                job.getMigratable());
    }

    static Job toProto(JobEntity job) {
        return toProto(job, null);
    }

    /** With the job's start-time forecast ({@code forecast} null: none). */
    static Job toProto(JobEntity job, StartTimes.Forecast forecast) {
        Job.Builder proto = Job.newBuilder()
                .setId(job.id.toString()).setName(job.name).setQueue(job.queue).setTeam(job.team).setOwner(job.owner)
                .setPriorityClass(job.priorityClass == null ? "" : job.priorityClass).setPriority(job.priority)
                .setTotalGpus(job.totalGpus).setState(job.state.name())
                .setPendingReason(job.pendingReason == null ? "" : job.pendingReason)
                .setSubmittedAt(job.submittedAt.toString()).setUpdatedAt(job.updatedAt.toString())
                .setAttempts(job.attempts);
        if (job.exitCode != null) {
            proto.setExitCode(job.exitCode);
        }
        JobPlacement placement = JobPlacement.fromJson(job.placement);
        if (placement != null) {
            Placement.Builder where = Placement.newBuilder().setAttempt(placement.attempt())
                    .setBoundAt(placement.boundAt() == null ? "" : placement.boundAt().toString())
                    .setNodeList(placement.nodeList());
            for (JobPlacement.Task t : placement.tasks()) {
                TaskPlacement.Builder task = TaskPlacement.newBuilder().setTask(t.task()).setNode(t.node()).addAllGpus(t.gpus())
                        .addAllMigDevices(t.migDevices());
                if (t.gpuMilli() != null) {
                    task.setGpuMilli(t.gpuMilli());
                }
                where.addTasks(task);
            }
            proto.setPlacement(where);
        }
        if (forecast != null) {
            if (forecast.at() != null) {
                proto.setEstimatedStartAt(forecast.at().toString());
            }
            proto.setStartForecast(dev.gantry.contracts.grpc.v1.StartForecast.newBuilder().setBasis(forecast.basis())
                    .addAllWaitsFor(forecast.waitsFor().stream().map(java.util.UUID::toString).toList())
                    .setNote(forecast.note() == null ? "" : forecast.note()));
        }
        return proto.build();
    }
}
