package dev.gantry.quota.domain;

import dev.gantry.contracts.validation.FieldViolation;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.ToLongFunction;

/**
 * The queues as a tree, and the rules that need more than one queue: the parent exists, no queue
 * is its own ancestor, a child's capability stays within its parent's, and the guarantees of a
 * queue's children fit within its own guarantee (a parent cannot promise its children more than
 * it is promised). Rules are checked on the whole tree as it would be after a change; only
 * violations that involve a changed queue are reported (the stored tree is valid already).
 */
public final class QueueTree {

    private final Map<String, QueueSpec> byName;
    private final Map<String, List<QueueSpec>> childrenByParent;

    public QueueTree(Collection<QueueSpec> queues) {
        this.byName = new TreeMap<>();
        queues.forEach(q -> byName.put(q.name(), q));
        this.childrenByParent = new LinkedHashMap<>();
        byName.values().forEach(q -> childrenByParent.computeIfAbsent(q.parent(), p -> new ArrayList<>()).add(q));
    }

    /** One broken rule, attributed to the queue whose change broke it. */
    public record Violation(String queue, String field, String message) {
        public FieldViolation toFieldViolation(String prefix) {
            return new FieldViolation(prefix + field, message);
        }
    }

    public Optional<QueueSpec> get(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    public Collection<QueueSpec> all() {
        return byName.values();
    }

    public List<QueueSpec> children(String name) {
        return childrenByParent.getOrDefault(name, List.of()).stream().sorted(Comparator.comparing(QueueSpec::name)).toList();
    }

    public boolean isLeaf(String name) {
        return children(name).isEmpty();
    }

    /** The queue and its ancestors, nearest first (stops at a cycle or a missing parent). */
    public List<QueueSpec> pathToRoot(String name) {
        List<QueueSpec> path = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        QueueSpec current = byName.get(name);
        while (current != null && seen.add(current.name())) {
            path.add(current);
            current = current.parent() == null ? null : byName.get(current.parent());
        }
        return path;
    }

    /** The queue's name and all names below it. */
    public Set<String> subtree(String name) {
        Set<String> names = new HashSet<>();
        List<String> todo = new ArrayList<>(List.of(name));
        while (!todo.isEmpty()) {
            String next = todo.removeLast();
            if (names.add(next)) {
                children(next).forEach(c -> todo.add(c.name()));
            }
        }
        return names;
    }

    /** Every rule broken in the tree that involves one of {@code changed} (single-queue rules included). */
    public List<Violation> violations(Set<String> changed) {
        List<Violation> out = new ArrayList<>();
        for (String name : changed) {
            QueueSpec q = byName.get(name);
            if (q == null) {
                continue;
            }
            q.violations().forEach(v -> out.add(new Violation(name, v.field(), v.message())));
            if (q.parent() != null && !q.parent().equals(q.name())) {
                QueueSpec parent = byName.get(q.parent());
                if (parent == null) {
                    out.add(new Violation(name, "parent", "no queue named " + q.parent()));
                } else if (isAncestorOrSelf(name, q.parent())) {
                    out.add(new Violation(name, "parent", "'" + q.parent() + "' is below '" + name
                            + "' in the tree; a queue cannot be its own ancestor"));
                }
            }
        }
        Set<String> parentsToCheck = new HashSet<>();
        for (String name : changed) {
            QueueSpec q = byName.get(name);
            if (q != null) {
                parentsToCheck.add(name);
                if (q.parent() != null && byName.containsKey(q.parent())) {
                    parentsToCheck.add(q.parent());
                }
            }
        }
        parentsToCheck.stream().sorted().forEach(p -> checkChildrenFit(byName.get(p), changed, out));
        return out;
    }

    /** True if {@code ancestor} is {@code name} or lies on the path from {@code candidate} up. */
    private boolean isAncestorOrSelf(String ancestor, String candidate) {
        return pathToRoot(candidate).stream().anyMatch(q -> q.name().equals(ancestor))
                || cycleThrough(candidate).contains(ancestor);
    }

    private Set<String> cycleThrough(String start) {
        Set<String> seen = new HashSet<>();
        QueueSpec current = byName.get(start);
        while (current != null && seen.add(current.name())) {
            current = current.parent() == null ? null : byName.get(current.parent());
        }
        return seen;
    }

    private void checkChildrenFit(QueueSpec parent, Set<String> changed, List<Violation> out) {
        List<QueueSpec> children = children(parent.name());
        if (children.isEmpty()) {
            return;
        }
        sumFits(parent, children, changed, out, "gpus", "GPUs", q -> q.guarantee().gpus());
        sumFits(parent, children, changed, out, "cpuMillis", "CPU millicores", q -> q.guarantee().cpuMillis());
        sumFits(parent, children, changed, out, "memoryMiB", "MiB", q -> q.guarantee().memoryMiB());
        Set<String> models = new java.util.TreeSet<>();
        children.forEach(c -> models.addAll(c.guarantee().gpusByModel().keySet()));
        for (String model : models) {
            long sum = children.stream().mapToLong(c -> c.guarantee().gpusByModel().getOrDefault(model, 0)).sum();
            long own = parent.guarantee().gpusByModel().getOrDefault(model, parent.guarantee().gpus());
            if (sum > own) {
                report(parent, children, changed, out, "guarantee.gpusByModel." + model, sum, own, model + " GPUs");
            }
        }
        for (QueueSpec child : children) {
            if (!changed.contains(child.name()) && !changed.contains(parent.name())) {
                continue;
            }
            capWithin(parent, child, changed, out, "gpus", child.capability().gpus(), parent.capability().gpus());
            capWithin(parent, child, changed, out, "cpuMillis", child.capability().cpuMillis(), parent.capability().cpuMillis());
            capWithin(parent, child, changed, out, "memoryMiB", child.capability().memoryMiB(), parent.capability().memoryMiB());
        }
    }

    private void sumFits(QueueSpec parent, List<QueueSpec> children, Set<String> changed, List<Violation> out,
            String field, String unit, ToLongFunction<QueueSpec> guarantee) {
        long sum = children.stream().mapToLong(guarantee).sum();
        long own = guarantee.applyAsLong(parent);
        if (sum > own) {
            report(parent, children, changed, out, "guarantee." + field, sum, own, unit);
        }
    }

    private static void report(QueueSpec parent, List<QueueSpec> children, Set<String> changed, List<Violation> out,
            String field, long sum, long own, String unit) {
        if (changed.contains(parent.name())) {
            out.add(new Violation(parent.name(), field, "must cover the guarantees of its children, which add up to "
                    + sum + " " + unit + " (is " + own + ")"));
        }
        for (QueueSpec child : children) {
            if (changed.contains(child.name()) && !changed.contains(parent.name())) {
                out.add(new Violation(child.name(), field, "the guarantees of the children of '" + parent.name()
                        + "' would add up to " + sum + " " + unit + ", more than its guarantee of " + own));
            }
        }
    }

    private static void capWithin(QueueSpec parent, QueueSpec child, Set<String> changed, List<Violation> out,
            String field, Number childCap, Number parentCap) {
        if (parentCap != null && childCap != null && childCap.longValue() > parentCap.longValue()) {
            if (changed.contains(child.name())) {
                out.add(new Violation(child.name(), "capability." + field, "must not exceed the capability of parent '"
                        + parent.name() + "' (" + parentCap + ")"));
            } else {
                out.add(new Violation(parent.name(), "capability." + field, "must not be below the capability of child '"
                        + child.name() + "' (" + childCap + ")"));
            }
        }
    }
}
