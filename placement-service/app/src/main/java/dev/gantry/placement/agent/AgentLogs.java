package dev.gantry.placement.agent;

import dev.gantry.kit.problem.InvalidRequestException;
import dev.gantry.placement.persistence.AgentLogChunk;
import dev.gantry.placement.persistence.AgentLogStream;
import dev.gantry.placement.persistence.AgentTask;
import dev.gantry.placement.persistence.Allocation;
import dev.gantry.placement.persistence.RunningJobRecord;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.LockModeType;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * The tasks' output, shipped by the node agents in chunks (they call out to placement as they do
 * for their reports, so this works wherever an agent can reach placement, with no port opened on
 * the GPU host). Each chunk must start where the task's stream ends: a chunk sent again, or from a
 * wrong place (an agent restarted and starting over), changes nothing and the answer says where to
 * go on from. Each task keeps at most {@code gantry.placement.agent.log-max-bytes} (its newest bytes);
 * streams are let go {@code gantry.placement.agent.log-retention} after their last chunk.
 */
@ApplicationScoped
public class AgentLogs {

    private static final Logger LOG = Logger.getLogger(AgentLogs.class);
    /** The most one chunk may carry (its JSON, base64, stays under the agent API's body limit). */
    public static final int MAX_CHUNK_BYTES = 32 * 1024;
    /** The most one read returns of one task. */
    public static final int MAX_READ_BYTES = 256 * 1024;

    /** What an append did: whether the chunk was taken, and where the stream now ends. */
    public record Appended(boolean accepted, long next) {
    }

    /** One task's output from {@code from} to {@code next}; {@code end}: all the agent shipped so far; {@code dropped}: bytes let go. */
    public record TaskLog(String task, String node, long from, long next, long end, long dropped, String text) {
    }

    /** The tasks' output of one attempt of a job ({@code attempts}: every attempt with output, oldest first). */
    public record JobLog(UUID jobId, Long attempt, List<Long> attempts, List<TaskLog> tasks) {
    }

    private final long maxBytes;
    private final Duration retention;

    public AgentLogs(@ConfigProperty(name = "gantry.placement.agent.log-max-bytes", defaultValue = "4194304") long maxBytes,
            @ConfigProperty(name = "gantry.placement.agent.log-retention", defaultValue = "7d") Duration retention) {
        this.maxBytes = maxBytes;
        this.retention = retention;
    }

    /**
     * Adds bytes {@code [offset, offset + data.length)} to a task's log. {@code mayShipFor} is called
     * with the node the task runs on before anything is written, and throws (403) for a caller that
     * may not speak for it.
     */
    public Uni<Appended> append(UUID jobId, long attempt, String task, long offset, byte[] data, Consumer<String> mayShipFor) {
        AgentTask.Key key = new AgentTask.Key(jobId, attempt, task);
        return Panache.withTransaction(() -> AgentLogStream.<AgentLogStream>findById(key, LockModeType.PESSIMISTIC_WRITE)
                .chain(found -> found != null ? Uni.createFrom().item(found) : open(jobId, attempt, task))
                .chain(stream -> {
                    boolean fresh = stream.updatedAt == null;
                    mayShipFor.accept(stream.node);
                    if (offset != stream.logEnd || data.length == 0) {
                        return Uni.createFrom().item(new Appended(false, stream.logEnd));
                    }
                    AgentLogChunk chunk = new AgentLogChunk();
                    chunk.jobId = jobId;
                    chunk.attempt = attempt;
                    chunk.task = task;
                    chunk.startOffset = offset;
                    chunk.endOffset = offset + data.length;
                    chunk.data = data;
                    stream.logEnd = chunk.endOffset;
                    stream.updatedAt = Instant.now();
                    Uni<?> saved = !fresh ? chunk.persist() : stream.persist().chain(chunk::persist);
                    return saved.chain(() -> trim(stream)).replaceWith(() -> new Appended(true, stream.logEnd));
                }));
    }

    /** A task's first chunk: the stream belongs to the node its task is (or was, for a report already in) allocated on. */
    private Uni<AgentLogStream> open(UUID jobId, long attempt, String task) {
        return AgentTask.<AgentTask>findById(new AgentTask.Key(jobId, attempt, task)).chain(reported -> {
            if (reported != null) {
                return Uni.createFrom().item(reported.node);
            }
            return RunningJobRecord.<RunningJobRecord>findById(jobId).chain(job -> job == null || AgentAssignments.attemptOf(job) != attempt
                    ? Uni.createFrom().<String>nullItem()
                    : Allocation.<Allocation>find("jobId = ?1 and task = ?2", jobId, task).firstResult().map(a -> a == null ? null : a.node));
        }).map(node -> {
            if (node == null) {
                throw InvalidRequestException.unprocessable("task", "job " + jobId + " attempt " + attempt + " has no task " + task
                        + " (it ended or was placed again before its output came)");
            }
            AgentLogStream stream = new AgentLogStream();
            stream.jobId = jobId;
            stream.attempt = attempt;
            stream.task = task;
            stream.node = node;
            return stream;
        });
    }

    /** The task's oldest chunks go while it holds more than the bound. */
    private Uni<Void> trim(AgentLogStream stream) {
        long cut = stream.logEnd - maxBytes;
        if (cut <= stream.logDropped) {
            return Uni.createFrom().voidItem();
        }
        return AgentLogChunk.delete("jobId = ?1 and attempt = ?2 and task = ?3 and endOffset <= ?4", stream.jobId, stream.attempt,
                        stream.task, cut)
                .chain(() -> AgentLogChunk.<AgentLogChunk>find("jobId = ?1 and attempt = ?2 and task = ?3 order by startOffset",
                        stream.jobId, stream.attempt, stream.task).firstResult())
                .invoke(first -> stream.logDropped = first == null ? stream.logEnd : ((AgentLogChunk) first).startOffset)
                .replaceWithVoid();
    }

    /**
     * The output of {@code attempt} (null: the latest with any), of every task or only {@code task};
     * from byte {@code offset} of each (or the first kept), at most {@code limit} bytes a task, cut
     * where a UTF-8 character ends (the rest comes with the next read).
     */
    public Uni<JobLog> read(UUID jobId, Long attempt, String task, long offset, int limit) {
        return Panache.withSession(() -> AgentLogStream.<AgentLogStream>list("jobId", jobId).chain(streams -> {
            List<Long> attempts = streams.stream().map(s -> s.attempt).distinct().sorted().toList();
            Long shown = attempt != null ? attempt : attempts.isEmpty() ? null : attempts.getLast();
            List<AgentLogStream> chosen = streams.stream()
                    .filter(s -> shown != null && s.attempt == shown && (task == null || s.task.equals(task)))
                    .sorted(Comparator.comparing(s -> s.task)).toList();
            Uni<List<TaskLog>> logs = Uni.createFrom().item(new ArrayList<>());
            for (AgentLogStream s : chosen) {
                logs = logs.chain(list -> readOne(s, offset, limit).map(one -> {
                    list.add(one);
                    return list;
                }));
            }
            return logs.map(list -> new JobLog(jobId, shown, attempts, list));
        }));
    }

    private Uni<TaskLog> readOne(AgentLogStream s, long offset, int limit) {
        long from = Math.max(offset, s.logDropped);
        long to = Math.min(s.logEnd, from + limit);
        if (from >= to) {
            long at = Math.min(from, s.logEnd);
            return Uni.createFrom().item(new TaskLog(s.task, s.node, at, at, s.logEnd, s.logDropped, ""));
        }
        return AgentLogChunk.<AgentLogChunk>list("jobId = ?1 and attempt = ?2 and task = ?3 and endOffset > ?4 and startOffset < ?5 "
                + "order by startOffset", s.jobId, s.attempt, s.task, from, to).map(chunks -> {
                    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
                    long at = from;
                    for (AgentLogChunk c : chunks) {
                        if (c.startOffset > at) {
                            at = c.startOffset; // let go meanwhile: go on from what is left
                        }
                        int start = (int) (at - c.startOffset);
                        int end = (int) (Math.min(c.endOffset, to) - c.startOffset);
                        if (end > start) {
                            bytes.write(c.data, start, end - start);
                            at = c.startOffset + end;
                        }
                    }
                    byte[] b = bytes.toByteArray();
                    long first = at - b.length;
                    int skip = 0;
                    while (skip < b.length && (b[skip] & 0xC0) == 0x80) {
                        skip++; // began inside a character (its first bytes were let go)
                    }
                    int keep = Utf8.completePrefix(b);
                    String text = keep > skip ? new String(b, skip, keep - skip, StandardCharsets.UTF_8) : "";
                    return new TaskLog(s.task, s.node, first + skip, first + Math.max(keep, skip), s.logEnd, s.logDropped, text);
                });
    }

    /** Streams (and their chunks) whose last chunk is older than the retention. */
    @Scheduled(every = "${gantry.placement.agent.log-sweep-every:1h}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> forgetOld() {
        Instant before = Instant.now().minus(retention);
        return Panache.withTransaction(() -> AgentLogStream.<AgentLogStream>list("updatedAt < ?1", before).chain(old -> {
            Uni<Void> chain = Uni.createFrom().voidItem();
            for (AgentLogStream s : old) {
                chain = chain.chain(() -> AgentLogChunk.delete("jobId = ?1 and attempt = ?2 and task = ?3", s.jobId, s.attempt, s.task))
                        .chain(s::delete);
            }
            if (!old.isEmpty()) {
                LOG.infof("let go of %d task logs older than %s", old.size(), retention);
            }
            return chain;
        }));
    }

    /** UTF-8 boundaries. */
    static final class Utf8 {
        private Utf8() {
        }

        /** The length of the longest prefix that does not end inside a character. */
        static int completePrefix(byte[] b) {
            int n = b.length;
            // look back at most 3 bytes for the lead byte of the last character
            for (int back = 1; back <= Math.min(4, n); back++) {
                int c = b[n - back] & 0xFF;
                if ((c & 0xC0) == 0x80) {
                    continue; // a continuation byte
                }
                int need = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
                return back >= need ? n : n - back;
            }
            return n;
        }
    }
}
