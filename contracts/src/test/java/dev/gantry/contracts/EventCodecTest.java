package dev.gantry.contracts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.MalformedEventException;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobQueued;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class EventCodecTest {

    private static JobQueued sampleJob() {
        return new JobQueued(UUID.randomUUID(), "tf-dist-train", "normal", "alice", 1000,
                Instant.parse("2026-12-02T10:00:00Z"), 2,
                List.of(new JobQueued.TaskGroup("ps", 1, 1, null, 4000, 16000),
                        new JobQueued.TaskGroup("worker", 1, 2, null, 8000, 32000)),
                List.of("A100-SXM4-80GB"), "nvlink", new JobQueued.Network("leaf", "node"), false, java.util.Map.of(),
                List.of(new JobQueued.Toleration("dedicated", "ml")), true, true, 7200L);
    }

    @Test
    void envelopeRoundTripsThroughJson() {
        JobQueued job = sampleJob();
        EventEnvelope<JobQueued> sent = EventEnvelope.of(Subjects.JOBS_QUEUED, job.jobId().toString(), job);

        String json = EventCodec.encode(sent);
        EventEnvelope<JobQueued> received = EventCodec.decode(json, JobQueued.class);

        assertThat(received).isEqualTo(sent);
        assertThat(received.payload().totalGpus()).isEqualTo(3);
        assertThat(json).contains("\"occurredAt\":\"").contains("\"type\":\"jobs.queued\"");
    }

    @Test
    void unknownPayloadFieldsFromANewerProducerAreIgnored() {
        String json = EventCodec.encode(EventEnvelope.of(Subjects.JOBS_QUEUED, "j", sampleJob()))
                .replace("\"queue\":", "\"addedLater\":42,\"queue\":");
        assertThat(EventCodec.decode(json, JobQueued.class).payload().queue()).isEqualTo("normal");
    }

    @Test
    void missingEnvelopeFieldsAreRejected() {
        assertThatThrownBy(() -> EventCodec.decode("{\"type\":\"jobs.queued\",\"payload\":{}}", JobQueued.class))
                .isInstanceOf(MalformedEventException.class)
                .hasMessageContaining("eventId");
        assertThatThrownBy(() -> EventCodec.decode("not json", JobQueued.class))
                .isInstanceOf(MalformedEventException.class);
    }

    @Test
    void everySubjectBelongsToAStream() {
        for (String subject : Subjects.ALL) {
            assertThat(Subjects.streamOf(subject)).isNotBlank();
        }
        assertThatThrownBy(() -> Subjects.streamOf("other.thing")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void envelopeReadsFromAJsonTreeAsFromText() throws Exception {
        EventEnvelope<JobQueued> sent = EventEnvelope.of(Subjects.JOBS_QUEUED, "j", sampleJob());
        var tree = EventCodec.mapper().readTree(EventCodec.encode(sent));
        assertThat(EventCodec.decode(tree, JobQueued.class)).isEqualTo(sent);
        assertThatThrownBy(() -> EventCodec.decode((com.fasterxml.jackson.databind.JsonNode) null, JobQueued.class))
                .isInstanceOf(MalformedEventException.class);
    }
}
