package dev.gantry.quota.domain;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * May this job enter this queue? A fixed list of rules, each returning a typed {@link Rejection}
 * or nothing; the first rejection is the answer. No rule throws: a rejection is an answer.
 */
public final class AdmissionPolicy {

    /**
     * The job as admission sees it. {@code gpuModel} and {@code priorityClass} may be null;
     * {@code priority} is the number the job asks for, null (or 0) when it asks for none.
     */
    public record Request(String user, List<String> teams, String queue, int gpus, String gpuModel, long cpuMillis, long memoryMiB,
            String priorityClass, Integer priority, boolean migratable) {
        public Request {
            teams = teams == null ? List.of() : List.copyOf(teams);
            priority = priority != null && priority == 0 ? null : priority;
        }

        /** A job that does not ask to be migratable. */
        public Request(String user, List<String> teams, String queue, int gpus, String gpuModel, long cpuMillis, long memoryMiB,
                String priorityClass, Integer priority) {
            this(user, teams, queue, gpus, gpuModel, cpuMillis, memoryMiB, priorityClass, priority, false);
        }

        public Request(String user, List<String> teams, String queue, int gpus, String gpuModel, long cpuMillis, long memoryMiB,
                String priorityClass) {
            this(user, teams, queue, gpus, gpuModel, cpuMillis, memoryMiB, priorityClass, null);
        }
    }

    /**
     * What the rules need to know.
     *
     * @param runningGpusByQueue       GPUs allocated per queue (own, not subtree)
     * @param pendingJobsOfUserByQueue the requesting user's pending jobs per queue
     */
    public record Context(QueueTree tree, Map<String, PriorityClassSpec> priorityClasses, Optional<UserLimits> userLimits,
            Map<String, Long> runningGpusByQueue, Map<String, Long> pendingJobsOfUserByQueue) {
    }

    public sealed interface Decision {
    }

    /**
     * Admitted, with the priority the job runs at: its class's value, else the number it asked for,
     * else its queue's default; and the class that gave it (the default class when none was named), if any.
     */
    public record Allowed(PriorityClassSpec priorityClass, int priority) implements Decision {
    }

    public record Rejected(Rejection rejection) implements Decision {
    }

    @FunctionalInterface
    interface Rule {
        Optional<Rejection> check(Request request, Context context);
    }

    private static final List<Rule> RULES = List.of(
            AdmissionPolicy::queueExists,
            AdmissionPolicy::leafQueue,
            AdmissionPolicy::queueOpen,
            AdmissionPolicy::member,
            AdmissionPolicy::priorityClassKnown,
            AdmissionPolicy::priorityClassAllowed,
            AdmissionPolicy::priorityWithinLimit,
            AdmissionPolicy::migrationAllowed,
            AdmissionPolicy::jobLimit,
            AdmissionPolicy::queueCapability,
            AdmissionPolicy::teamLimit,
            AdmissionPolicy::pendingJobs);

    private AdmissionPolicy() {
    }

    public static Decision check(Request request, Context context) {
        for (Rule rule : RULES) {
            Optional<Rejection> rejection = rule.check(request, context);
            if (rejection.isPresent()) {
                return new Rejected(rejection.get());
            }
        }
        PriorityClassSpec priorityClass = resolvePriorityClass(request, context).orElse(null);
        return new Allowed(priorityClass, priority(request, context, priorityClass));
    }

    /** Its class's value, else the number it asked for, else its queue's default. */
    private static int priority(Request request, Context context, PriorityClassSpec priorityClass) {
        if (request.priorityClass() != null && priorityClass != null) {
            return priorityClass.value();
        }
        if (request.priority() != null) {
            return request.priority();
        }
        return queueDefaultPriority(request.queue(), context)
                .orElse(priorityClass != null ? priorityClass.value() : 0);
    }

    /** The nearest {@code defaultPriority} on the queue's path to the root. */
    private static Optional<Integer> queueDefaultPriority(String queue, Context context) {
        return context.tree().pathToRoot(queue).stream().map(q -> q.limits().defaultPriority()).filter(Objects::nonNull).findFirst();
    }

    /** A class limited to some queues or teams is refused elsewhere. */
    static Optional<Rejection> priorityClassAllowed(Request request, Context context) {
        PriorityClassSpec named = request.priorityClass() == null ? null : context.priorityClasses().get(request.priorityClass());
        if (named == null) {
            return Optional.empty();
        }
        List<String> path = context.tree().pathToRoot(request.queue()).stream().map(QueueSpec::name).toList();
        return named.allows(path, request.teams()) ? Optional.empty()
                : Optional.of(new Rejection.PriorityClassNotAllowed(named.name(), request.queue(), named.queues(), named.teams()));
    }

    /** A migratable job only where the nearest queue on the path that says allows migration (none says: allowed). */
    static Optional<Rejection> migrationAllowed(Request request, Context context) {
        if (!request.migratable()) {
            return Optional.empty();
        }
        return context.tree().pathToRoot(request.queue()).stream()
                .filter(q -> q.limits().migrationAllowed() != null).findFirst()
                .filter(q -> !q.limits().migrationAllowed())
                .map(q -> new Rejection.MigrationNotAllowed(request.queue(), q.name()));
    }

    /**
     * The nearest {@code maxPriority} on the queue's path caps what a job asks for, by number or by
     * class; without one, a number may not exceed the queue's default (a job may lower its priority
     * freely, raising it takes an admin: a class, or a queue limit).
     */
    static Optional<Rejection> priorityWithinLimit(Request request, Context context) {
        Optional<QueueSpec> capping = context.tree().pathToRoot(request.queue()).stream()
                .filter(q -> q.limits().maxPriority() != null).findFirst();
        PriorityClassSpec named = request.priorityClass() == null ? null : context.priorityClasses().get(request.priorityClass());
        if (named != null) {
            return capping.filter(q -> named.value() > q.limits().maxPriority())
                    .map(q -> new Rejection.PriorityAboveLimit(named.value(), q.limits().maxPriority(),
                            "queue '" + q.name() + "' (priority class '" + named.name() + "')"));
        }
        if (request.priority() == null) {
            return Optional.empty();
        }
        if (capping.isPresent()) {
            int max = capping.get().limits().maxPriority();
            return request.priority() > max
                    ? Optional.of(new Rejection.PriorityAboveLimit(request.priority(), max, "queue '" + capping.get().name() + "'"))
                    : Optional.empty();
        }
        PriorityClassSpec globalDefault = context.priorityClasses().values().stream().filter(PriorityClassSpec::globalDefault)
                .findFirst().orElse(null);
        int ceiling = queueDefaultPriority(request.queue(), context).orElse(globalDefault != null ? globalDefault.value() : 0);
        return request.priority() > ceiling
                ? Optional.of(new Rejection.PriorityAboveLimit(request.priority(), ceiling,
                        "queue '" + request.queue() + "' sets no maxPriority, so its default priority"))
                : Optional.empty();
    }

    private static Optional<PriorityClassSpec> resolvePriorityClass(Request request, Context context) {
        if (request.priorityClass() != null) {
            return Optional.ofNullable(context.priorityClasses().get(request.priorityClass()));
        }
        return context.priorityClasses().values().stream().filter(PriorityClassSpec::globalDefault).findFirst();
    }

    static Optional<Rejection> queueExists(Request request, Context context) {
        return context.tree().get(request.queue()).isPresent()
                ? Optional.empty()
                : Optional.of(new Rejection.QueueNotFound(request.queue()));
    }

    static Optional<Rejection> leafQueue(Request request, Context context) {
        List<QueueSpec> children = context.tree().children(request.queue());
        return children.isEmpty()
                ? Optional.empty()
                : Optional.of(new Rejection.NotLeafQueue(request.queue(), children.stream().map(QueueSpec::name).toList()));
    }

    static Optional<Rejection> queueOpen(Request request, Context context) {
        return context.tree().pathToRoot(request.queue()).stream()
                .filter(q -> q.state() == QueueSpec.QueueState.CLOSED)
                .findFirst()
                .map(closed -> new Rejection.QueueClosed(request.queue(), closed.name()));
    }

    /** The nearest queue on the path to the root that lists members decides; none: open to all. */
    static Optional<Rejection> member(Request request, Context context) {
        for (QueueSpec q : context.tree().pathToRoot(request.queue())) {
            if (q.members().listsNobody()) {
                continue;
            }
            boolean member = q.members().users().contains(request.user())
                    || request.teams().stream().anyMatch(q.members().teams()::contains);
            return member ? Optional.empty()
                    : Optional.of(new Rejection.NotMember(request.user(), request.teams(), request.queue(), q.name()));
        }
        return Optional.empty();
    }

    static Optional<Rejection> priorityClassKnown(Request request, Context context) {
        return request.priorityClass() == null || context.priorityClasses().containsKey(request.priorityClass())
                ? Optional.empty()
                : Optional.of(new Rejection.UnknownPriorityClass(request.priorityClass()));
    }

    static Optional<Rejection> jobLimit(Request request, Context context) {
        List<Rejection> candidates = new ArrayList<>();
        context.userLimits().filter(l -> l.maxGpusPerJob() != null && request.gpus() > l.maxGpusPerJob())
                .ifPresent(l -> candidates.add(new Rejection.ExceedsJobLimit(request.gpus(), l.maxGpusPerJob(),
                        "the limit of user '" + request.user() + "'")));
        for (QueueSpec q : context.tree().pathToRoot(request.queue())) {
            Integer max = q.limits().maxGpusPerJob();
            if (max != null && request.gpus() > max) {
                candidates.add(new Rejection.ExceedsJobLimit(request.gpus(), max, "queue '" + q.name() + "'"));
            }
        }
        return candidates.stream().findFirst();
    }

    static Optional<Rejection> queueCapability(Request request, Context context) {
        for (QueueSpec q : context.tree().pathToRoot(request.queue())) {
            ResourceLimits cap = q.capability();
            if (cap.gpus() != null && request.gpus() > cap.gpus()) {
                return Optional.of(new Rejection.ExceedsQueueCapability(q.name(), "GPUs", request.gpus(), cap.gpus()));
            }
            if (request.gpuModel() != null && cap.gpusByModel().containsKey(request.gpuModel())
                    && request.gpus() > cap.gpusByModel().get(request.gpuModel())) {
                return Optional.of(new Rejection.ExceedsQueueCapability(q.name(), request.gpuModel() + " GPUs", request.gpus(),
                        cap.gpusByModel().get(request.gpuModel())));
            }
            if (cap.cpuMillis() != null && request.cpuMillis() > cap.cpuMillis()) {
                return Optional.of(new Rejection.ExceedsQueueCapability(q.name(), "CPU millicores", request.cpuMillis(), cap.cpuMillis()));
            }
            if (cap.memoryMiB() != null && request.memoryMiB() > cap.memoryMiB()) {
                return Optional.of(new Rejection.ExceedsQueueCapability(q.name(), "MiB of memory", request.memoryMiB(), cap.memoryMiB()));
            }
        }
        return Optional.empty();
    }

    static Optional<Rejection> teamLimit(Request request, Context context) {
        for (QueueSpec q : context.tree().pathToRoot(request.queue())) {
            Integer max = q.limits().maxRunningGpus();
            if (max == null) {
                continue;
            }
            long running = sum(context.runningGpusByQueue(), context.tree().subtree(q.name()));
            if (running + request.gpus() > max) {
                return Optional.of(new Rejection.ExceedsTeamLimit(q.name(), running, request.gpus(), max));
            }
        }
        return Optional.empty();
    }

    static Optional<Rejection> pendingJobs(Request request, Context context) {
        Optional<UserLimits> user = context.userLimits().filter(l -> l.maxPendingJobs() != null);
        if (user.isPresent()) {
            long pending = context.pendingJobsOfUserByQueue().values().stream().mapToLong(Long::longValue).sum();
            if (pending >= user.get().maxPendingJobs()) {
                return Optional.of(new Rejection.TooManyPendingJobs(request.user(), pending, user.get().maxPendingJobs(),
                        "the limit of user '" + request.user() + "'"));
            }
        }
        for (QueueSpec q : context.tree().pathToRoot(request.queue())) {
            Integer max = q.limits().maxPendingJobsPerUser();
            if (max == null) {
                continue;
            }
            long pending = sum(context.pendingJobsOfUserByQueue(), context.tree().subtree(q.name()));
            if (pending >= max) {
                return Optional.of(new Rejection.TooManyPendingJobs(request.user(), pending, max, "queue '" + q.name() + "'"));
            }
        }
        return Optional.empty();
    }

    private static long sum(Map<String, Long> byQueue, Set<String> queues) {
        return queues.stream().mapToLong(q -> byQueue.getOrDefault(q, 0L)).sum();
    }
}
