package dev.gantry.quota.service;

import dev.gantry.contracts.validation.FieldViolation;
import dev.gantry.kit.problem.InvalidRequestException;
import dev.gantry.quota.domain.PriorityClassSpec;
import dev.gantry.quota.domain.QueueSpec;
import dev.gantry.quota.domain.QueueTree;
import dev.gantry.quota.persistence.PriorityClassEntity;
import dev.gantry.quota.persistence.QueueEntity;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Writes of queues and priority classes that must see the whole tree: validated against the tree
 * as it would be after the change, under a database lock so that two concurrent writers cannot
 * each pass validation and together break the tree. Call inside a transaction.
 */
@ApplicationScoped
public class QuotaStore {

    /** Any constant: the advisory lock that serialises writes of the queue tree. */
    private static final long TREE_LOCK = 0x6761_6e74_7279_01L;

    public Uni<Void> lockTree() {
        return Panache.getSession().chain(s -> s.createNativeQuery("select count(*) from pg_advisory_xact_lock(?1)")
                .setParameter(1, TREE_LOCK).getSingleResult()).replaceWithVoid();
    }

    public Uni<List<QueueSpec>> allQueues() {
        return QueueEntity.<QueueEntity>listAll().map(rows -> rows.stream().map(QueueEntity::toSpec).toList());
    }

    public Uni<List<PriorityClassSpec>> allPriorityClasses() {
        return PriorityClassEntity.<PriorityClassEntity>listAll().map(rows -> rows.stream().map(PriorityClassEntity::toSpec).toList());
    }

    /**
     * Creates or replaces queues and priority classes all together, or none (422 naming every broken
     * rule). {@code fieldPrefix} maps a queue or class name to the prefix of its fields in the request.
     */
    public Uni<Void> saveAll(List<QueueSpec> queues, List<PriorityClassSpec> classes, Function<String, String> queuePrefix,
            Function<String, String> classPrefix) {
        return lockTree()
                .chain(this::allQueues)
                .chain(existing -> allPriorityClasses().map(existingClasses -> {
                    List<FieldViolation> violations = new ArrayList<>(validateQueues(existing, queues, queuePrefix));
                    violations.addAll(validateClasses(existingClasses, classes, classPrefix));
                    if (!violations.isEmpty()) {
                        throw InvalidRequestException.unprocessable(violations);
                    }
                    return null;
                }))
                .chain(() -> Multi.createFrom().iterable(parentsFirst(queues)).onItem().transformToUniAndConcatenate(this::upsert).collect().last())
                .chain(() -> Multi.createFrom().iterable(classes).onItem().transformToUniAndConcatenate(this::upsert).collect().last())
                .replaceWithVoid();
    }

    /** The parent table column is a foreign key: insert parents before their children. */
    static List<QueueSpec> parentsFirst(List<QueueSpec> queues) {
        Map<String, QueueSpec> byName = new LinkedHashMap<>();
        queues.forEach(q -> byName.put(q.name(), q));
        List<QueueSpec> ordered = new ArrayList<>();
        Set<String> done = new LinkedHashSet<>();
        for (QueueSpec q : queues) {
            visit(q, byName, done, ordered, new LinkedHashSet<>());
        }
        return ordered;
    }

    private static void visit(QueueSpec q, Map<String, QueueSpec> byName, Set<String> done, List<QueueSpec> ordered, Set<String> path) {
        if (done.contains(q.name()) || !path.add(q.name())) {
            return;
        }
        QueueSpec parent = q.parent() == null ? null : byName.get(q.parent());
        if (parent != null) {
            visit(parent, byName, done, ordered, path);
        }
        if (done.add(q.name())) {
            ordered.add(q);
        }
    }

    static List<FieldViolation> validateQueues(Collection<QueueSpec> existing, List<QueueSpec> changes, Function<String, String> prefix) {
        Map<String, QueueSpec> after = new LinkedHashMap<>();
        existing.forEach(q -> after.put(q.name(), q));
        Set<String> changed = new LinkedHashSet<>();
        List<FieldViolation> out = new ArrayList<>();
        for (QueueSpec q : changes) {
            if (!changed.add(q.name())) {
                out.add(new FieldViolation(prefix.apply(q.name()) + "name", "queue '" + q.name() + "' is given more than once"));
            }
            after.put(q.name(), q);
        }
        new QueueTree(after.values()).violations(changed).forEach(v -> out.add(v.toFieldViolation(prefix.apply(v.queue()))));
        return out;
    }

    static List<FieldViolation> validateClasses(Collection<PriorityClassSpec> existing, List<PriorityClassSpec> changes,
            Function<String, String> prefix) {
        Map<String, PriorityClassSpec> after = new LinkedHashMap<>();
        existing.forEach(c -> after.put(c.name(), c));
        changes.forEach(c -> after.put(c.name(), c));
        List<FieldViolation> out = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>();
        for (PriorityClassSpec c : changes) {
            String p = prefix.apply(c.name());
            if (!seen.add(c.name())) {
                out.add(new FieldViolation(p + "name", "priority class '" + c.name() + "' is given more than once"));
            }
            c.violations().forEach(v -> out.add(new FieldViolation(p + v.field(), v.message())));
            List<PriorityClassSpec> others = after.values().stream().filter(o -> !o.name().equals(c.name())).toList();
            PriorityClassSpec.defaultViolations(c, others).forEach(v -> out.add(new FieldViolation(p + v.field(), v.message())));
        }
        return out;
    }

    private Uni<QueueEntity> upsert(QueueSpec spec) {
        return QueueEntity.<QueueEntity>findById(spec.name()).chain(existing -> {
            QueueEntity row = existing != null ? existing : new QueueEntity();
            row.apply(spec);
            return row.<QueueEntity>persist();
        });
    }

    private Uni<PriorityClassEntity> upsert(PriorityClassSpec spec) {
        return PriorityClassEntity.<PriorityClassEntity>findById(spec.name()).chain(existing -> {
            PriorityClassEntity row = existing != null ? existing : new PriorityClassEntity();
            row.apply(spec);
            return row.<PriorityClassEntity>persist();
        });
    }
}
