package dev.gantry.placement.agent;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.placement.cluster.Leadership;
import dev.gantry.placement.persistence.Allocation;
import dev.gantry.placement.persistence.NodeRecord;
import dev.gantry.placement.window.Requeue;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * A node whose agent stopped heartbeating turns {@code NOT_READY} in the inventory (its heartbeat
 * timeout); once it has been so for {@code gantry.placement.agent.lost-after}, the jobs holding GPUs
 * on it go back in line with their submission time ({@code placements.requeued}: QUEUED, not
 * FAILED), each in a transaction of its own. Only the leader sweeps. Should the agent come back, its
 * tasks' assignments are gone and it stops them.
 */
@ApplicationScoped
public class LostAgentNodes {

    private static final Logger LOG = Logger.getLogger(LostAgentNodes.class);

    private final Requeue requeue;
    private final Leadership leadership;
    private final Duration lostAfter;

    public LostAgentNodes(Requeue requeue, Leadership leadership,
            @ConfigProperty(name = "gantry.placement.agent.lost-after", defaultValue = "2m") Duration lostAfter) {
        this.requeue = requeue;
        this.leadership = leadership;
        this.lostAfter = lostAfter;
    }

    @Scheduled(every = "${gantry.placement.agent.check-every:5s}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> sweep() {
        if (!leadership.leading()) {
            return Uni.createFrom().voidItem();
        }
        Instant since = Instant.now().minus(lostAfter);
        return Panache.withSession(() -> NodeRecord.<NodeRecord>list("source = ?1 and removed = false and updatedAt <= ?2",
                        NodeInfo.SOURCE_AGENT, since)
                .chain(nodes -> {
                    List<String> lost = nodes.stream().filter(LostAgentNodes::notReady).map(n -> n.name).toList();
                    return lost.isEmpty() ? Uni.createFrom().item(List.<Allocation>of())
                            : Allocation.<Allocation>list("node in ?1", lost);
                }))
                .onItem().transformToMulti(rows -> {
                    Map<UUID, String> jobs = new LinkedHashMap<>();
                    rows.forEach(a -> jobs.putIfAbsent(a.jobId, a.node));
                    return Multi.createFrom().iterable(jobs.entrySet());
                })
                .onItem().transformToUniAndConcatenate(job -> Panache.withTransaction(() -> requeue.requeue(job.getKey(),
                                Subjects.PLACEMENTS_REQUEUED, "node " + job.getValue() + " not ready for more than " + lostAfter.toSeconds()
                                        + " s (its agent stopped heartbeating)"))
                        .invoke(done -> {
                            if (done) {
                                LOG.infof("job %s requeued: node %s lost its agent", job.getKey(), job.getValue());
                            }
                        })
                        .onFailure().recoverWithItem(e -> {
                            LOG.warnf("requeueing job %s off node %s failed (next sweep retries): %s", job.getKey(), job.getValue(), e);
                            return false;
                        }))
                .collect().last()
                .replaceWithVoid();
    }

    private static boolean notReady(NodeRecord node) {
        try {
            return EventCodec.fromJson(node.info, NodeInfo.class).health() != NodeInfo.Health.READY;
        } catch (RuntimeException e) {
            return false; // an unreadable description says nothing about its health
        }
    }
}
