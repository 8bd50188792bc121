package dev.gantry.admission.console;

import dev.gantry.admission.forecast.StartTimes;
import dev.gantry.admission.JobAdmission;
import dev.gantry.admission.JobQuery;
import dev.gantry.admission.domain.Caller;
import dev.gantry.admission.domain.JobState;
import dev.gantry.admission.persistence.JobEntity;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.rest.client.inject.RestClient;
import org.hibernate.reactive.mutiny.Mutiny;
import org.jboss.logging.Logger;

/**
 * What the console's pages show, gathered from the other services' REST APIs and admission's own
 * jobs. A service that does not answer leaves its part of a page empty with a sentence saying so;
 * the rest of the page still renders.
 */
@ApplicationScoped
public class ConsoleData {

    private static final Logger LOG = Logger.getLogger(ConsoleData.class);
    /** inventory pages are at most 500 nodes; more pages than this is a cluster the console does not draw whole */
    private static final int MAX_NODE_PAGES = 40;
    /** jobs of all teams in the live streams' snapshot, most recently changed first */
    private static final int SNAPSHOT_JOBS = 5000;

    /** A part of a page and, when its source did not answer, why it is missing. */
    public record Part<T>(T value, String problem) {
    }

    private final InventoryClient inventory;
    private final PlacementClient placement;
    private final QueuesClient queues;
    private final JobAdmission admission;
    private final StartTimes startTimes;
    private final Mutiny.SessionFactory sessions;
    private final Uni<List<Object[]>> recentJobs;
    private final Uni<Part<List<PlacementClient.Allocation>>> sharedAllocations;
    private final Uni<Part<List<InventoryClient.Node>>> sharedNodes;

    public ConsoleData(@RestClient InventoryClient inventory, @RestClient PlacementClient placement, @RestClient QueuesClient queues,
            JobAdmission admission, StartTimes startTimes, Mutiny.SessionFactory sessions,
            @ConfigProperty(name = "gantry.console.refresh-interval", defaultValue = "2s") Duration refreshInterval) {
        this.startTimes = startTimes;
        this.inventory = inventory;
        this.placement = placement;
        this.queues = queues;
        this.admission = admission;
        this.sessions = sessions;
        // the live streams' snapshot: concurrent streams share one read in flight and its answer for the interval
        this.recentJobs = Uni.createFrom().deferred(this::readRecentJobs).memoize().atLeast(refreshInterval);
        this.sharedAllocations = Uni.createFrom().deferred(this::allocations).memoize().atLeast(refreshInterval);
        this.sharedNodes = Uni.createFrom().deferred(this::nodes).memoize().atLeast(refreshInterval);
    }

    public Uni<Part<List<InventoryClient.Node>>> nodes() {
        return nodePages(null, new ArrayList<>(), 0)
                .map(nodes -> new Part<List<InventoryClient.Node>>(nodes, null))
                .onFailure().recoverWithItem(e -> unavailable("node-inventory-service", e, List.of()));
    }

    private Uni<List<InventoryClient.Node>> nodePages(String cursor, List<InventoryClient.Node> into, int page) {
        return inventory.nodes(500, cursor).chain(p -> {
            into.addAll(p.items() == null ? List.of() : p.items());
            return p.nextCursor() == null || page + 1 >= MAX_NODE_PAGES ? Uni.createFrom().item(into) : nodePages(p.nextCursor(), into, page + 1);
        });
    }

    public Uni<Part<List<PlacementClient.Allocation>>> allocations() {
        return placement.allocations()
                .map(a -> new Part<List<PlacementClient.Allocation>>(a, null))
                .onFailure().recoverWithItem(e -> unavailable("placement-service", e, List.of()));
    }

    /** The heat map; jobs of teams the caller is not in are shown by queue only. */
    public Uni<Part<ClusterMap>> cluster(Caller caller) {
        return Uni.combine().all().unis(nodes(), allocations()).asTuple().chain(t -> {
            List<PlacementClient.Allocation> allocations = t.getItem2().value();
            List<UUID> ids = allocations.stream().map(PlacementClient.Allocation::jobId).distinct().toList();
            Uni<List<JobEntity>> jobs = ids.isEmpty() ? Uni.createFrom().item(List.of())
                    : Panache.withSession(() -> JobEntity.<JobEntity>list("id in ?1", ids));
            return jobs.map(found -> {
                Map<UUID, ClusterMap.JobRef> refs = new HashMap<>();
                found.forEach(j -> refs.put(j.id, new ClusterMap.JobRef(caller.canSee(j.team) ? j.name : null, j.queue)));
                String problem = join(t.getItem1().problem(), t.getItem2().problem());
                return new Part<>(ClusterMap.of(t.getItem1().value(), allocations, refs), problem);
            });
        });
    }

    public Uni<Part<QueueBoard>> queues() {
        return queues.queues()
                .chain(list -> list.isEmpty() ? Uni.createFrom().item(List.<QueuesClient.Status>of())
                        : Uni.join().all(list.stream().map(q -> queues.status(q.name())).toList()).andFailFast())
                .map(statuses -> new Part<>(QueueBoard.of(statuses), null))
                .onFailure().recoverWithItem(e -> unavailable("quota-service", e, QueueBoard.of(List.of())));
    }

    public Uni<List<String>> queueNames() {
        return queues.queues().map(list -> list.stream().map(QueuesClient.Queue::name).sorted().toList())
                .onFailure().recoverWithItem(List.of());
    }

    /** Jobs page rows: newest first, at most {@code limit}, with their GPUs from placement. */
    public Uni<Part<List<JobRow>>> jobs(JobFilter filter, Caller caller, int limit) {
        Caller scoped = filter.scope().equals(JobFilter.ALL) && caller.admin() ? caller : new Caller(caller.user(), caller.teams(), false);
        String user = filter.scope().equals(JobFilter.MINE) ? caller.user() : null;
        JobQuery query = JobQuery.page(filter.queue(), filter.state(), user, null, limit);
        return Uni.combine().all().unis(admission.list(query, scoped), allocations()).asTuple()
                .chain(t -> startTimes.of(t.getItem1(), caller).map(forecasts -> {
                    Map<UUID, List<PlacementClient.Allocation>> byJob = t.getItem2().value().stream()
                            .collect(Collectors.groupingBy(PlacementClient.Allocation::jobId));
                    Instant now = Instant.now();
                    List<JobRow> rows = t.getItem1().stream()
                            .map(j -> JobRow.of(j, byJob.getOrDefault(j.id, List.of()), forecasts.get(j.id), now)).toList();
                    return new Part<>(rows, t.getItem2().problem() == null ? null : t.getItem2().problem() + " (GPUs of placed jobs unknown)");
                }));
    }

    /**
     * A fingerprint of what the caller's pages show (their jobs' states and pending reasons, every
     * allocation, every node's state): the live stream sends it when it changes. Every open stream
     * reads the same snapshot, taken at most once per refresh interval however many are open (the
     * most recently changed jobs of all teams, allocations, nodes), and keeps the jobs its caller may
     * see: a change moves a job to the front, so a caller's change is always within the snapshot.
     */
    public Uni<String> fingerprint(Caller caller) {
        return Uni.combine().all().unis(recentJobs, sharedAllocations, sharedNodes).asTuple().map(t -> {
            StringBuilder b = new StringBuilder();
            t.getItem1().stream().filter(r -> caller.canSee((String) r[1])).limit(500)
                    .forEach(r -> b.append(r[0]).append(r[2]).append(r[3]).append(';'));
            t.getItem2().value().forEach(a -> b.append(a.jobId()).append(a.node()).append(a.gpus()).append(a.gpuMilli()).append(';'));
            t.getItem3().value().forEach(n -> b.append(n.name()).append(n.schedulable()).append(n.cordoned()).append(n.health()).append(';'));
            b.append(t.getItem2().problem()).append(t.getItem3().problem());
            return Integer.toHexString(b.toString().hashCode()) + "-" + b.length();
        });
    }

    /** (id, team, state, pending reason) of the most recently changed jobs; a stateless session, so never a cached row. */
    private Uni<List<Object[]>> readRecentJobs() {
        return sessions.withStatelessSession(s -> s.createSelectionQuery(
                "select j.id, j.team, j.state, j.pendingReason from JobEntity j order by j.updatedAt desc", Object[].class)
                .setMaxResults(SNAPSHOT_JOBS).getResultList());
    }

    private static <T> Part<T> unavailable(String service, Throwable e, T empty) {
        LOG.debugf(e, "console: %s did not answer", service);
        return new Part<>(empty, service + " did not answer (" + e.getClass().getSimpleName()
                + (e.getMessage() == null ? "" : ": " + e.getMessage().lines().findFirst().orElse("")) + ")");
    }

    private static String join(String a, String b) {
        return a == null ? b : b == null ? a : a + "; " + b;
    }

    /** Filters of the jobs page; {@code scope} is mine, team or all (all: admins only). */
    public record JobFilter(String scope, String queue, JobState state) {
        public static final String MINE = "mine";
        public static final String TEAM = "team";
        public static final String ALL = "all";
    }
}
