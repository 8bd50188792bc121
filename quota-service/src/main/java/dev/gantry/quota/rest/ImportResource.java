package dev.gantry.quota.rest;

import dev.gantry.kit.problem.InvalidRequestException;
import dev.gantry.kit.security.GantryRoles;
import dev.gantry.quota.domain.PriorityClassSpec;
import dev.gantry.quota.domain.QueueSpec;
import dev.gantry.quota.service.ManifestReader;
import dev.gantry.quota.service.QuotaStore;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * {@code POST /v1/import}: multi-document YAML of Volcano Queues and Kubernetes PriorityClasses,
 * stored all together or not at all. A Volcano queue replaces the stored queue's weight,
 * guarantee, capability, reclaimable and parent (and its state when the manifest has one: Volcano's
 * status.state); its members and limits (which Volcano does not carry) are kept. {@code parent: root} means a top-level queue unless a queue named
 * {@code root} exists or is imported.
 */
@Path("/v1/import")
@Produces(MediaType.APPLICATION_JSON)
public class ImportResource {

    @Inject
    QuotaStore store;

    public record ImportResult(List<String> queues, List<String> priorityClasses, List<String> warnings) {
    }

    @POST
    @Consumes({"application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml", MediaType.TEXT_PLAIN})
    @RolesAllowed({GantryRoles.ADMIN})
    public Uni<ImportResult> importManifests(String body) {
        ManifestReader.Manifests manifests;
        try {
            manifests = ManifestReader.read(body);
        } catch (ManifestReader.UnreadableYamlException e) {
            throw InvalidRequestException.badRequest("body", e.getMessage());
        }
        if (!manifests.violations().isEmpty()) {
            throw InvalidRequestException.unprocessable(manifests.violations());
        }
        Map<String, String> queuePrefix = new HashMap<>();
        manifests.queues().forEach(d -> queuePrefix.put(d.spec().name(), "documents[" + d.index() + "]."));
        Map<String, String> classPrefix = new HashMap<>();
        manifests.priorityClasses().forEach(d -> classPrefix.put(d.spec().name(), "documents[" + d.index() + "]."));
        List<PriorityClassSpec> classes = manifests.priorityClasses().stream().map(ManifestReader.ClassDocument::spec).toList();
        List<String> warnings = new ArrayList<>(manifests.warnings());
        return Panache.withTransaction(() -> store.lockTree().chain(store::allQueues).chain(existing -> {
            Map<String, QueueSpec> stored = existing.stream().collect(Collectors.toMap(QueueSpec::name, q -> q));
            Set<String> imported = manifests.queues().stream().map(d -> d.spec().name()).collect(Collectors.toSet());
            List<QueueSpec> queues = new ArrayList<>();
            for (ManifestReader.QueueDocument d : manifests.queues()) {
                QueueSpec q = d.spec();
                String parent = q.parent();
                if ("root".equals(parent) && !stored.containsKey("root") && !imported.contains("root")) {
                    parent = null;
                    warnings.add("documents[" + d.index() + "]: parent 'root' (Volcano's implicit root) read as a top-level queue");
                }
                QueueSpec old = stored.get(q.name());
                queues.add(new QueueSpec(q.name(), parent, q.weight(), q.guarantee(), q.capability(), q.reclaimable(),
                        old == null || d.stateGiven() ? q.state() : old.state(), old == null ? q.members() : old.members(),
                        old == null ? q.limits() : old.limits()));
            }
            return store.saveAll(queues, classes, name -> queuePrefix.getOrDefault(name, ""),
                    name -> classPrefix.getOrDefault(name, ""));
        })).replaceWith(() -> new ImportResult(manifests.queues().stream().map(d -> d.spec().name()).toList(),
                classes.stream().map(PriorityClassSpec::name).toList(), warnings));
    }
}
