package dev.gantry.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.rpc.BadRequest;
import dev.gantry.contracts.grpc.v1.CancelJobRequest;
import dev.gantry.contracts.grpc.v1.GetJobRequest;
import dev.gantry.contracts.grpc.v1.Job;
import dev.gantry.contracts.grpc.v1.JobService;
import dev.gantry.contracts.grpc.v1.JobSpec;
import dev.gantry.contracts.grpc.v1.ListJobsRequest;
import dev.gantry.contracts.grpc.v1.SubmitJobRequest;
import dev.gantry.contracts.grpc.v1.TaskGroup;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.quarkus.grpc.GrpcClient;
import io.quarkus.grpc.GrpcClientUtils;
import io.quarkus.test.junit.QuarkusTest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** gantry.v1.JobService: the same semantics and errors as REST, over gRPC on the HTTP port. */
@QuarkusTest
class JobGrpcServiceTest {

    @GrpcClient("jobs")
    JobService jobs;

    private static final Duration WAIT = Duration.ofSeconds(20);

    private JobService as(String token) {
        Metadata headers = new Metadata();
        headers.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
        return GrpcClientUtils.attachHeaders(jobs, headers);
    }

    private static JobSpec.Builder spec(String name) {
        return JobSpec.newBuilder().setName(name).setQueue("normal").setMinAvailable(2)
                .addTaskGroups(TaskGroup.newBuilder().setName("worker").setReplicas(2).setGpusPerReplica(4)
                        .setCpuMillis(8000).setMemoryMib(64000).setImage("pytorch:2.5").addCommand("torchrun"))
                .addGpuModels("H100-SXM5-80GB").setGpuTopology("nvlink").setNetworkRequired("leaf");
    }

    @Test
    void submitGetListAndCancel() {
        JobService alice = as(Tokens.of("alice", "vision"));
        Job submitted = alice.submit(SubmitJobRequest.newBuilder().setJob(spec("grpc-train")).build()).await().atMost(WAIT);
        assertThat(submitted.getState()).isEqualTo("QUEUED");
        assertThat(submitted.getTotalGpus()).isEqualTo(8);
        assertThat(submitted.getTeam()).isEqualTo("vision");

        assertThat(alice.get(GetJobRequest.newBuilder().setId(submitted.getId()).build()).await().atMost(WAIT).getName())
                .isEqualTo("grpc-train");
        assertThat(alice.list(ListJobsRequest.newBuilder().setLimit(500).build()).await().atMost(WAIT).getJobsList())
                .extracting(Job::getId).contains(submitted.getId());

        assertThat(alice.cancel(CancelJobRequest.newBuilder().setId(submitted.getId()).build()).await().atMost(WAIT).getState())
                .isEqualTo("CANCELLED");
        assertThatThrownBy(() -> alice.cancel(CancelJobRequest.newBuilder().setId(submitted.getId()).build()).await().atMost(WAIT))
                .isInstanceOf(StatusRuntimeException.class)
                .satisfies(e -> assertThat(Status.fromThrowable(e).getCode()).isEqualTo(Status.Code.ABORTED));
    }

    @Test
    void idempotentRetryReturnsTheFirstJob() {
        JobService alice = as(Tokens.of("alice", "vision"));
        SubmitJobRequest request = SubmitJobRequest.newBuilder().setJob(spec("grpc-retried"))
                .setIdempotencyKey("grpc-" + System.nanoTime()).build();
        String first = alice.submit(request).await().atMost(WAIT).getId();
        assertThat(alice.submit(request).await().atMost(WAIT).getId()).isEqualTo(first);
    }

    @Test
    void errorsCarryTheRestStatusesAndTheWrongFields() {
        assertThatThrownBy(() -> jobs.get(GetJobRequest.newBuilder().setId("x").build()).await().atMost(WAIT))
                .satisfies(e -> assertThat(Status.fromThrowable(e).getCode()).isEqualTo(Status.Code.UNAUTHENTICATED));
        // a node agent's token is not a user's
        assertThatThrownBy(() -> as(dev.gantry.testing.TestTokens.agent("dgx-01")).get(GetJobRequest.newBuilder().setId("x").build())
                .await().atMost(WAIT))
                .satisfies(e -> assertThat(Status.fromThrowable(e).getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));

        JobService alice = as(Tokens.of("alice", "vision"));
        StatusRuntimeException invalid = (StatusRuntimeException) org.assertj.core.api.Assertions.catchThrowable(() ->
                alice.submit(SubmitJobRequest.newBuilder().setJob(spec("Bad_Name").setMinAvailable(9)).build()).await().atMost(WAIT));
        assertThat(invalid.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
        List<String> fields = StatusProto.fromThrowable(invalid).getDetailsList().stream()
                .map(any -> {
                    try {
                        return any.unpack(BadRequest.class);
                    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                        throw new AssertionError(e);
                    }
                })
                .flatMap(bad -> bad.getFieldViolationsList().stream())
                .map(BadRequest.FieldViolation::getField)
                .toList();
        assertThat(fields).contains("name", "minAvailable");

        Job visionJob = alice.submit(SubmitJobRequest.newBuilder().setJob(spec("grpc-private")).build()).await().atMost(WAIT);
        assertThatThrownBy(() -> as(Tokens.of("mallory", "speech")).get(GetJobRequest.newBuilder().setId(visionJob.getId()).build())
                .await().atMost(WAIT))
                .satisfies(e -> assertThat(Status.fromThrowable(e).getCode()).isEqualTo(Status.Code.NOT_FOUND));
    }

    @jakarta.inject.Inject
    dev.gantry.testing.TestDatabase db;

    @Test
    void aTaskGroupsWorkingDirectoryAndEnvironmentAreCarriedAndChecked() {
        JobService alice = as(Tokens.of("alice", "vision"));
        JobSpec.Builder withEnv = spec("grpc-env");
        withEnv.setTaskGroups(0, withEnv.getTaskGroups(0).toBuilder().setWorkingDir("/workspace").putEnv("EPOCHS", "90"));
        Job job = alice.submit(SubmitJobRequest.newBuilder().setJob(withEnv).build()).await().atMost(WAIT);
        String envelope = db.queryString("select envelope from outbox_event where subject = 'jobs.queued' and subject_id = ?", job.getId());
        assertThat(envelope).contains("\"workingDir\":\"/workspace\"").contains("\"env\":{\"EPOCHS\":\"90\"}");

        JobSpec.Builder reserved = spec("grpc-env-bad");
        reserved.setTaskGroups(0, reserved.getTaskGroups(0).toBuilder().setWorkingDir("relative").putEnv("WORLD_SIZE", "1"));
        StatusRuntimeException invalid = (StatusRuntimeException) org.assertj.core.api.Assertions.catchThrowable(() ->
                alice.submit(SubmitJobRequest.newBuilder().setJob(reserved).build()).await().atMost(WAIT));
        assertThat(invalid.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
        assertThat(StatusProto.fromThrowable(invalid).getDetailsList().stream().map(any -> {
            try {
                return any.unpack(BadRequest.class);
            } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                throw new AssertionError(e);
            }
        }).flatMap(bad -> bad.getFieldViolationsList().stream()).map(BadRequest.FieldViolation::getField).toList())
                .contains("taskGroups[0].workingDir", "taskGroups[0].env.WORLD_SIZE");
    }

    @Test
    void aMigRequestOverGrpcTravelsToPlacementAndABadProfileIsNamed() {
        JobService alice = as(Tokens.of("alice", "vision"));
        JobSpec.Builder mig = spec("grpc-mig").setGpuTopology("any");
        mig.setTaskGroups(0, mig.getTaskGroups(0).toBuilder().setGpusPerReplica(1).setMigProfile("2g.20gb"));
        Job job = alice.submit(SubmitJobRequest.newBuilder().setJob(mig).build()).await().atMost(WAIT);
        assertThat(db.queryString("select envelope from outbox_event where subject = 'jobs.queued' and subject_id = ?", job.getId()))
                .contains("\"migProfile\":\"2g.20gb\"");

        JobSpec.Builder bad = spec("grpc-mig-bad").setGpuTopology("any");
        bad.setTaskGroups(0, bad.getTaskGroups(0).toBuilder().setMigProfile("2 slices"));
        StatusRuntimeException invalid = (StatusRuntimeException) org.assertj.core.api.Assertions.catchThrowable(() ->
                alice.submit(SubmitJobRequest.newBuilder().setJob(bad).build()).await().atMost(WAIT));
        assertThat(invalid.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
        assertThat(StatusProto.fromThrowable(invalid).getDetailsList().stream().map(any -> {
            try {
                return any.unpack(BadRequest.class);
            } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                throw new AssertionError(e);
            }
        }).flatMap(b -> b.getFieldViolationsList().stream()).map(BadRequest.FieldViolation::getField).toList())
                .contains("taskGroups[0].migProfile");
    }

    @Test
    void aMigratableJobOverGrpcMustBeCheckpointable() {
        JobService alice = as(Tokens.of("alice", "vision"));
        StatusRuntimeException refused = (StatusRuntimeException) org.assertj.core.api.Assertions.catchThrowable(() ->
                alice.submit(SubmitJobRequest.newBuilder().setJob(spec("grpc-mover").setMigratable(true)).build()).await().atMost(WAIT));
        assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
        assertThat(StatusProto.fromThrowable(refused).getDetailsList().stream().map(any -> {
            try {
                return any.unpack(BadRequest.class);
            } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                throw new AssertionError(e);
            }
        }).flatMap(bad -> bad.getFieldViolationsList().stream()).map(BadRequest.FieldViolation::getField).toList()).contains("migratable");
        Job accepted = alice.submit(SubmitJobRequest.newBuilder().setJob(spec("grpc-mover").setMigratable(true).setCheckpointable(true))
                .build()).await().atMost(WAIT);
        assertThat(accepted.getState()).isEqualTo("QUEUED");
    }

    @Test
    void watchStreamsChangesUntilTheJobEnds() throws Exception {
        JobService alice = as(Tokens.of("alice", "vision"));
        Job job = alice.submit(SubmitJobRequest.newBuilder().setJob(spec("grpc-watched")).build()).await().atMost(WAIT);
        CompletableFuture<List<String>> states = alice.watch(GetJobRequest.newBuilder().setId(job.getId()).build())
                .map(Job::getState).collect().asList().subscribeAsCompletionStage();
        Thread.sleep(800);
        alice.cancel(CancelJobRequest.newBuilder().setId(job.getId()).build()).await().atMost(WAIT);
        assertThat(states.get(20, java.util.concurrent.TimeUnit.SECONDS)).containsExactly("QUEUED", "CANCELLED");
    }
}
