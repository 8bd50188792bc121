package dev.gantry.quota.service;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.quota.QuotaShares;
import dev.gantry.kit.outbox.Outbox;
import dev.gantry.quota.domain.Amounts;
import dev.gantry.quota.domain.FairShare;
import dev.gantry.quota.domain.QueueSpec;
import dev.gantry.quota.domain.QueueTree;
import dev.gantry.quota.domain.UsageDecay;
import dev.gantry.quota.persistence.AllocationEntity;
import dev.gantry.quota.persistence.NodeCapacityEntity;
import dev.gantry.quota.persistence.PendingJobEntity;
import dev.gantry.quota.persistence.QueueUsageEntity;
import dev.gantry.quota.persistence.SharesPublicationEntity;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Runs the fair-share function on the current state: on demand (status, admission) and on a fixed
 * tick that also accrues decayed usage and publishes {@code quota.shares} through the outbox when
 * the shares changed or the publication period has passed.
 */
@ApplicationScoped
public class FairShareService {

    private static final Logger LOG = Logger.getLogger(FairShareService.class);
    private static final long TICK_LOCK = 0x6761_6e74_7279_02L;

    /** The result of one computation with the state it came from. */
    public record Computed(QuotaSnapshot snapshot, Amounts capacity, String capacitySource, FairShare.Result result, Instant at) {
    }

    private final Outbox outbox;
    private final QuotaStore store;
    private final MeterRegistry registry;
    private final Timer computeTimer;
    private final Duration halfLife;
    private final Duration publishPeriod;
    private final Optional<Long> capacityGpus;
    private final Optional<Long> capacityCpuMillis;
    private final Optional<Long> capacityMemoryMiB;
    private final Map<String, double[]> gaugeValues = new ConcurrentHashMap<>();

    public FairShareService(Outbox outbox, QuotaStore store, MeterRegistry registry,
            @ConfigProperty(name = "gantry.quota.usage.half-life", defaultValue = "7d") Duration halfLife,
            @ConfigProperty(name = "gantry.quota.shares.publish-period", defaultValue = "60s") Duration publishPeriod,
            @ConfigProperty(name = "gantry.quota.capacity.gpus") Optional<Long> capacityGpus,
            @ConfigProperty(name = "gantry.quota.capacity.cpu-millis") Optional<Long> capacityCpuMillis,
            @ConfigProperty(name = "gantry.quota.capacity.memory-mib") Optional<Long> capacityMemoryMiB) {
        this.outbox = outbox;
        this.store = store;
        this.registry = registry;
        this.halfLife = halfLife;
        this.publishPeriod = publishPeriod;
        this.capacityGpus = capacityGpus;
        this.capacityCpuMillis = capacityCpuMillis;
        this.capacityMemoryMiB = capacityMemoryMiB;
        this.computeTimer = Timer.builder("gantry.quota.fairshare.computation")
                .description("time to compute the fair shares of all queues")
                .register(registry);
    }

    public Duration halfLife() {
        return halfLife;
    }

    /** Loads the state; call inside a session. */
    public Uni<QuotaSnapshot> load() {
        return store.allQueues().chain(queues -> store.allPriorityClasses()
                .chain(classes -> AllocationEntity.<AllocationEntity>listAll()
                        .chain(allocations -> PendingJobEntity.<PendingJobEntity>listAll()
                                .chain(pending -> NodeCapacityEntity.<NodeCapacityEntity>listAll()
                                        .chain(nodes -> QueueUsageEntity.<QueueUsageEntity>listAll()
                                                .map(usage -> new QuotaSnapshot(queues, classes, allocations, pending, nodes, usage)))))));
    }

    /** The cluster's capacity: configured (when set, e.g. without an inventory), else the sum of ready nodes. */
    public Amounts capacity(QuotaSnapshot snapshot) {
        double gpus = 0;
        double cpu = 0;
        double mem = 0;
        for (NodeCapacityEntity n : snapshot.nodes()) {
            if (n.ready) {
                gpus += n.gpus;
                cpu += n.cpuMillis;
                mem += n.memoryMiB;
            }
        }
        return new Amounts(capacityGpus.map(Long::doubleValue).orElse(gpus), capacityCpuMillis.map(Long::doubleValue).orElse(cpu),
                capacityMemoryMiB.map(Long::doubleValue).orElse(mem));
    }

    private String capacitySource() {
        return capacityGpus.isPresent() || capacityCpuMillis.isPresent() || capacityMemoryMiB.isPresent()
                ? "configured (gantry.quota.capacity.*)"
                : "sum of ready nodes reported by the node inventory";
    }

    /** Decayed usage as of {@code now}, without accruing anything since the last tick. */
    public Map<String, Double> usageAt(QuotaSnapshot snapshot, Instant now) {
        Map<String, Double> out = new HashMap<>();
        for (QueueUsageEntity u : snapshot.usage()) {
            out.put(u.queue, UsageDecay.advance(u.usageHours, Duration.between(u.updatedAt, now).toMillis() / 1000.0,
                    halfLife.toMillis() / 1000.0, 0));
        }
        return out;
    }

    public Computed compute(QuotaSnapshot snapshot, Map<String, Double> usage, Instant now) {
        Amounts capacity = capacity(snapshot);
        Map<String, Amounts> allocated = snapshot.allocatedByQueue();
        Map<String, Amounts> pending = snapshot.pendingByQueue();
        List<FairShare.QueueInput> inputs = new ArrayList<>();
        for (QueueSpec q : snapshot.queues()) {
            Amounts demand = allocated.getOrDefault(q.name(), Amounts.ZERO).plus(pending.getOrDefault(q.name(), Amounts.ZERO));
            inputs.add(new FairShare.QueueInput(q.name(), q.parent(), q.weight(), q.guarantee().toAmounts(), q.capability().toAmounts(),
                    demand, usage.getOrDefault(q.name(), 0.0)));
        }
        FairShare.Result result = computeTimer.record(() -> FairShare.compute(new FairShare.Input(capacity, inputs)));
        updateGauges(snapshot, result);
        return new Computed(snapshot, capacity, capacitySource(), result, now);
    }

    /** Computes on the state as it is now, read in its own session. */
    public Uni<Computed> computeNow() {
        return Panache.withSession(() -> load()).map(s -> {
            Instant now = Instant.now();
            return compute(s, usageAt(s, now), now);
        });
    }

    @Scheduled(every = "${gantry.quota.shares.check-interval:5s}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> scheduledTick() {
        return tick().onFailure().invoke(e -> LOG.warnf("fair-share tick failed (will retry): %s", e.toString()))
                .onFailure().recoverWithNull().replaceWithVoid();
    }

    /**
     * One tick, in one transaction: accrue decayed usage, compute shares, and put {@code quota.shares}
     * into the outbox if they changed or the period passed. Returns whether it published.
     */
    public Uni<Boolean> tick() {
        return Panache.withTransaction(() -> Panache.getSession()
                .chain(s -> s.createNativeQuery("select pg_try_advisory_xact_lock(?1)", Boolean.class)
                        .setParameter(1, TICK_LOCK).getSingleResult())
                .chain(locked -> !locked ? Uni.createFrom().item(false)
                        : load().chain(snapshot -> accrueUsage(snapshot).chain(usage -> publishIfDue(snapshot, usage)))));
    }

    private Uni<Map<String, Double>> accrueUsage(QuotaSnapshot snapshot) {
        Instant now = Instant.now();
        Amounts capacity = capacity(snapshot);
        Map<String, Amounts> allocated = snapshot.allocatedByQueue();
        Map<String, QueueUsageEntity> rows = new HashMap<>();
        snapshot.usage().forEach(u -> rows.put(u.queue, u));
        Map<String, Double> usage = new HashMap<>();
        List<QueueUsageEntity> toPersist = new ArrayList<>();
        double halfLifeSeconds = halfLife.toMillis() / 1000.0;
        for (QueueSpec q : snapshot.queues()) {
            QueueUsageEntity row = rows.get(q.name());
            if (row == null) {
                row = new QueueUsageEntity();
                row.queue = q.name();
                row.usageHours = 0;
                row.updatedAt = now;
                toPersist.add(row);
            } else {
                double elapsed = Math.max(0, Duration.between(row.updatedAt, now).toMillis() / 1000.0);
                double share = UsageDecay.dominantShare(allocated.getOrDefault(q.name(), Amounts.ZERO), capacity);
                row.usageHours = UsageDecay.advance(row.usageHours, elapsed, halfLifeSeconds, share);
                row.updatedAt = now;
            }
            usage.put(q.name(), row.usageHours);
        }
        return Multi.createFrom().iterable(toPersist).onItem().transformToUniAndConcatenate(r -> r.<QueueUsageEntity>persist())
                .collect().last().replaceWith(usage);
    }

    private Uni<Boolean> publishIfDue(QuotaSnapshot snapshot, Map<String, Double> usage) {
        Instant now = Instant.now();
        Computed computed = compute(snapshot, usage, now);
        QuotaShares shares = toShares(computed);
        String fingerprint = fingerprint(shares);
        return SharesPublicationEntity.<SharesPublicationEntity>findById(SharesPublicationEntity.ID).chain(last -> {
            boolean changed = last == null || !last.fingerprint.equals(fingerprint);
            boolean periodPassed = last == null || !last.publishedAt.plus(publishPeriod).isAfter(now);
            if (!changed && !periodPassed) {
                return Uni.createFrom().item(false);
            }
            SharesPublicationEntity row = last != null ? last : new SharesPublicationEntity();
            row.id = SharesPublicationEntity.ID;
            row.fingerprint = fingerprint;
            row.publishedAt = now;
            return outbox.append(Subjects.QUOTA_SHARES, "cluster", shares)
                    .chain(() -> row.<SharesPublicationEntity>persist())
                    .replaceWith(true);
        });
    }

    public QuotaShares toShares(Computed computed) {
        Map<String, Amounts> allocated = computed.snapshot().allocatedByQueue();
        Map<String, Amounts> pending = computed.snapshot().pendingByQueue();
        QueueTree tree = new QueueTree(computed.snapshot().queues());
        List<QuotaShares.QueueShare> queues = new ArrayList<>();
        for (QueueSpec q : parentsFirst(tree)) {
            FairShare.Share s = computed.result().get(q.name());
            if (s == null) {
                continue;
            }
            long alloc = 0;
            long pend = 0;
            for (String name : tree.subtree(q.name())) {
                alloc += (long) allocated.getOrDefault(name, Amounts.ZERO).gpus();
                pend += (long) pending.getOrDefault(name, Amounts.ZERO).gpus();
            }
            queues.add(new QuotaShares.QueueShare(q.name(), q.parent(), q.weight(), q.reclaimable(), q.state().name(),
                    q.guarantee().gpus(), q.capability().gpus(), q.limits().maxRunningGpus(),
                    Amounts.round(s.deserved().gpus()), Amounts.round(s.deserved().cpuMillis()), Amounts.round(s.deserved().memoryMiB()),
                    alloc, pend, Math.round(s.usageFactor() * 100) / 100.0));
        }
        Amounts c = computed.capacity();
        return new QuotaShares(computed.at(), new QuotaShares.Capacity((long) c.gpus(), (long) c.cpuMillis(), (long) c.memoryMiB()),
                halfLife.toMillis() / 3_600_000.0, queues);
    }

    static List<QueueSpec> parentsFirst(QueueTree tree) {
        List<QueueSpec> out = new ArrayList<>();
        List<QueueSpec> level = tree.all().stream().filter(q -> q.parent() == null || tree.get(q.parent()).isEmpty()).toList();
        while (!level.isEmpty()) {
            out.addAll(level);
            level = level.stream().flatMap(q -> tree.children(q.name()).stream()).toList();
        }
        return out;
    }

    /** Shares as compared between ticks: everything but the time, deserved to two decimals. */
    private static String fingerprint(QuotaShares shares) {
        List<QuotaShares.QueueShare> rounded = shares.queues().stream()
                .map(q -> new QuotaShares.QueueShare(q.name(), q.parent(), q.weight(), q.reclaimable(), q.state(), q.guaranteeGpus(),
                        q.capabilityGpus(), q.maxRunningGpus(), r2(q.deservedGpus()), r2(q.deservedCpuMillis()), r2(q.deservedMemoryMiB()),
                        q.allocatedGpus(), q.pendingGpus(), Math.round(q.usageFactor() * 10) / 10.0))
                .toList();
        return EventCodec.toJson(List.of(shares.capacity(), rounded));
    }

    private static double r2(double v) {
        return Math.round(v * 100) / 100.0;
    }

    /** Per-queue gauges: deserved, allocated and pending GPUs (subtree totals for allocated and pending). */
    private void updateGauges(QuotaSnapshot snapshot, FairShare.Result result) {
        QueueTree tree = new QueueTree(snapshot.queues());
        Map<String, Amounts> allocated = snapshot.allocatedByQueue();
        Map<String, Amounts> pending = snapshot.pendingByQueue();
        for (String queue : gaugeValues.keySet()) {
            if (tree.get(queue).isEmpty()) {
                gaugeValues.get(queue)[0] = 0; // deleted queue: zeros rather than a stale value
                gaugeValues.get(queue)[1] = 0;
                gaugeValues.get(queue)[2] = 0;
            }
        }
        for (QueueSpec q : snapshot.queues()) {
            FairShare.Share s = result.get(q.name());
            double alloc = 0;
            double pend = 0;
            for (String name : tree.subtree(q.name())) {
                alloc += allocated.getOrDefault(name, Amounts.ZERO).gpus();
                pend += pending.getOrDefault(name, Amounts.ZERO).gpus();
            }
            double[] values = gaugeValues.computeIfAbsent(q.name(), this::registerGauges);
            values[0] = s == null ? 0 : s.deserved().gpus();
            values[1] = alloc;
            values[2] = pend;
        }
    }

    private double[] registerGauges(String queue) {
        double[] values = new double[3];
        Gauge.builder("gantry.quota.deserved.gpus", values, v -> v[0]).tag("queue", queue)
                .description("GPUs the queue deserves by fair share").register(registry);
        Gauge.builder("gantry.quota.allocated.gpus", values, v -> v[1]).tag("queue", queue)
                .description("GPUs held by running jobs of the queue and its children").register(registry);
        Gauge.builder("gantry.quota.pending.gpus", values, v -> v[2]).tag("queue", queue)
                .description("GPUs asked for by pending jobs of the queue and its children").register(registry);
        return values;
    }
}
