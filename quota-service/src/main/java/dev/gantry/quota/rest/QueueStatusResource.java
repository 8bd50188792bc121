package dev.gantry.quota.rest;

import dev.gantry.kit.security.GantryRoles;
import dev.gantry.quota.domain.Amounts;
import dev.gantry.quota.domain.FairShare;
import dev.gantry.quota.domain.QueueSpec;
import dev.gantry.quota.domain.QueueTree;
import dev.gantry.quota.service.FairShareService;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/** A queue's numbers as fair share sees them now, each with the reason for it. */
@Path("/v1/queues/{name}/status")
@Produces(MediaType.APPLICATION_JSON)
public class QueueStatusResource {

    @Inject
    FairShareService fairShare;

    /** One figure per resource (GPUs, CPU millicores, memory MiB) and the sentence that explains it. */
    public record Figure(Double gpus, Double cpuMillis, Double memoryMiB, String reason) {
        static Figure of(Amounts a, String reason) {
            return new Figure(value(a.gpus()), value(a.cpuMillis()), value(a.memoryMiB()), reason);
        }

        /** null: unbounded */
        private static Double value(double v) {
            return Double.isInfinite(v) ? null : Amounts.round(v);
        }
    }

    public record Usage(double decayedDominantShareHours, double halfLifeHours, double factor, double weight, double effectiveWeight,
            String reason) {
    }

    public record QueueStatus(String queue, String parent, String state, boolean reclaimable, Figure capacity, Figure guarantee,
            Figure capability, Figure deserved, Figure allocated, Figure borrowed, Figure pending, Map<String, Long> allocatedGpusByModel,
            Usage usage, Instant computedAt) {
    }

    @GET
    @RolesAllowed({GantryRoles.USER, GantryRoles.ADMIN, GantryRoles.SERVICE})
    public Uni<QueueStatus> status(@PathParam("name") String name) {
        return fairShare.computeNow().map(c -> {
            QueueTree tree = new QueueTree(c.snapshot().queues());
            QueueSpec q = tree.get(name).orElseThrow(() -> new NotFoundException("no queue named " + name));
            FairShare.Share s = c.result().get(name);
            Set<String> subtree = tree.subtree(name);
            Amounts allocated = sum(c.snapshot().allocatedByQueue(), subtree);
            Amounts pending = sum(c.snapshot().pendingByQueue(), subtree);
            long pendingJobs = subtree.stream().mapToLong(n -> c.snapshot().pendingJobCountByQueue().getOrDefault(n, 0L)).sum();
            Amounts borrowed = allocated.minusFloorZero(s.deserved());
            Map<String, Long> byModel = new TreeMap<>();
            subtree.forEach(n -> c.snapshot().allocatedGpusByQueueAndModel().getOrDefault(n, Map.of())
                    .forEach((model, gpus) -> byModel.merge(model, gpus, Long::sum)));
            String scope = subtree.size() > 1 ? " in '" + name + "' and the queues below it" : "";
            double halfLifeHours = fairShare.halfLife().toMillis() / 3_600_000.0;
            return new QueueStatus(name, q.parent(), q.state().name(), q.reclaimable(),
                    Figure.of(c.capacity(), "cluster capacity: " + c.capacitySource()),
                    Figure.of(q.guarantee().toAmounts(), guaranteeReason(q, s)),
                    Figure.of(q.capability().toAmounts(), q.capability().gpus() == null
                            ? "no GPU capability set: bounded only by its parent and the cluster"
                            : "capability set on the queue: it never deserves or holds more than " + q.capability().gpus() + " GPUs"),
                    Figure.of(s.deserved(), s.explanation()),
                    Figure.of(allocated, String.format(Locale.ROOT, "%s GPUs held by %d running jobs%s (from placements.* events)",
                            fmt(allocated.gpus()), runningJobs(c, subtree), scope)),
                    Figure.of(borrowed, borrowedReason(q, allocated, s.deserved(), borrowed)),
                    Figure.of(pending, String.format(Locale.ROOT, "%s GPUs asked for by %d pending jobs%s (from jobs.* events)",
                            fmt(pending.gpus()), pendingJobs, scope)),
                    byModel,
                    new Usage(Amounts.round(s.usage()), halfLifeHours, Math.round(s.usageFactor() * 1000) / 1000.0, s.weight(),
                            Math.round(s.effectiveWeight() * 1000) / 1000.0, usageReason(s, halfLifeHours)),
                    c.at());
        });
    }

    private static long runningJobs(FairShareService.Computed c, Set<String> subtree) {
        return c.snapshot().allocations().stream().filter(a -> subtree.contains(a.queue)).count();
    }

    private static Amounts sum(Map<String, Amounts> byQueue, Set<String> names) {
        Amounts total = Amounts.ZERO;
        for (String n : names) {
            total = total.plus(byQueue.getOrDefault(n, Amounts.ZERO));
        }
        return total;
    }

    private static String guaranteeReason(QueueSpec q, FairShare.Share s) {
        if (q.guarantee().gpus() == 0) {
            return "no GPU guarantee set: everything it deserves comes from sharing by weight";
        }
        String base = "guarantee set on the queue: " + q.guarantee().gpus() + " GPUs are its deserved minimum whenever it asks for them";
        if (s.effectiveDemand().gpus() < q.guarantee().gpus()) {
            base += String.format(Locale.ROOT, "; it asks for %s now, so the rest of its guarantee is lent to other queues",
                    fmt(s.effectiveDemand().gpus()));
        }
        if (s.guaranteeScaled()) {
            base += "; the guarantees of its siblings exceed what its parent has, so they are scaled down in proportion";
        }
        return base;
    }

    private static String borrowedReason(QueueSpec q, Amounts allocated, Amounts deserved, Amounts borrowed) {
        if (borrowed.gpus() <= 0) {
            return String.format(Locale.ROOT, "holds %s GPUs, within the %s it deserves: nothing borrowed",
                    fmt(allocated.gpus()), fmt(deserved.gpus()));
        }
        return String.format(Locale.ROOT, "holds %s GPUs but deserves %s: %s borrowed from queues that do not need them now; %s",
                fmt(allocated.gpus()), fmt(deserved.gpus()), fmt(borrowed.gpus()),
                q.reclaimable() ? "reclaimable, so they may be taken back (preempted) when other queues need their share"
                        : "not reclaimable, so they are kept until its jobs end");
    }

    private static String usageReason(FairShare.Share s, double halfLifeHours) {
        if (halfLifeHours <= 0) {
            return "historic usage is disabled (half-life 0)";
        }
        return String.format(Locale.ROOT,
                "decayed usage %s dominant-share hours (half-life %s h); among its siblings its usage factor 2^(-usage part / weight part) is %s, "
                        + "so it competes for spare capacity with weight %s x %s = %s",
                fmt(s.usage()), fmt(halfLifeHours), fmt(s.usageFactor()), fmt(s.weight()), fmt(s.usageFactor()), fmt(s.effectiveWeight()));
    }

    private static String fmt(double v) {
        double r = Amounts.round(v);
        return r == Math.rint(r) ? String.valueOf((long) r) : String.valueOf(r);
    }
}
