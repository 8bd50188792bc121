package dev.gantry.placement.kubernetes;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a user's own ResourceClaim asks for, read as Gantry can place it exactly: N whole GPUs (requests of the GPU
 * DeviceClass, {@code exactly.count: N}, allocationMode ExactCount) or N MIG devices of one profile (the MIG DeviceClass
 * with the selector {@code device.attributes['<driver>'].profile == '<profile>'}). Anything else (another class,
 * allocationMode All, a prioritized list, a selector or constraint Gantry does not read, admin access, requests of
 * different kinds) is refused with what it asked, never placed as something else. Pure.
 */
public final class UserClaims {

    private UserClaims() {
    }

    /**
     * What a claim (or all of a pod's claims) asks for: {@code devices} whole GPUs ({@code migProfile} null) or MIG devices of
     * {@code migProfile}; {@code refusal} says why Gantry cannot read it (then the rest means nothing). {@code asked}: for messages.
     */
    public record Ask(int devices, String migProfile, String refusal, String asked) {

        /** A pod that references no claim. */
        public static final Ask NONE = new Ask(0, null, null, "");

        static Ask refused(String why) {
            return new Ask(0, null, why, why);
        }

        public boolean refused() {
            return refusal != null;
        }

        /** Two asks of one pod: devices of one kind add up; devices of different kinds cannot be one task's, and are refused. */
        public Ask plus(Ask other) {
            if (refused() || other.devices == 0 && !other.refused()) {
                return this;
            }
            if (other.refused() || devices == 0) {
                return other;
            }
            if (!java.util.Objects.equals(migProfile, other.migProfile)) {
                return refused(asked + " and " + other.asked + ": devices of different kinds for one pod, which Gantry does not place");
            }
            return new Ask(devices + other.devices, migProfile, null, asked + ", " + other.asked);
        }
    }

    /** One request of a claim and how many devices it gets, in the claim's order. */
    public record Request(String name, int count) {
    }

    /**
     * The claim Kubernetes uses for one of a pod's {@code spec.resourceClaims}: the one it names, or the one the resourceclaim
     * controller made from its template (named in {@code status.resourceClaimStatuses}); null while that is not made yet.
     */
    public static String claimName(Pod pod, PodResourceClaim entry) {
        if (entry.getResourceClaimName() != null) {
            return entry.getResourceClaimName();
        }
        if (pod.getStatus() == null || pod.getStatus().getResourceClaimStatuses() == null) {
            return null;
        }
        return pod.getStatus().getResourceClaimStatuses().stream().filter(s -> entry.getName().equals(s.getName()))
                .map(PodResourceClaimStatus::getResourceClaimName).filter(java.util.Objects::nonNull).findFirst().orElse(null);
    }

    /** The pod's claim references ({@code spec.resourceClaims}), empty when it has none. */
    public static List<PodResourceClaim> references(Pod pod) {
        return pod.getSpec() == null || pod.getSpec().getResourceClaims() == null ? List.of() : pod.getSpec().getResourceClaims();
    }

    /** What claim {@code name} asks for. */
    public static Ask read(String name, ResourceClaimSpec spec, String driver, String gpuClass, String migClass) {
        String claim = "claim " + name;
        if (spec == null || spec.getDevices() == null || spec.getDevices().getRequests() == null
                || spec.getDevices().getRequests().isEmpty()) {
            return Ask.refused(claim + " asks for no device");
        }
        if (spec.getDevices().getConstraints() != null && !spec.getDevices().getConstraints().isEmpty()) {
            return Ask.refused(claim + " has constraints (matchAttribute), which Gantry does not read");
        }
        Ask ask = Ask.NONE;
        for (DeviceRequest r : spec.getDevices().getRequests()) {
            ask = ask.plus(read(claim + " request " + r.getName(), r, driver, gpuClass, migClass));
        }
        return ask;
    }

    private static Ask read(String what, DeviceRequest r, String driver, String gpuClass, String migClass) {
        ExactDeviceRequest e = r.getExactly();
        if (e == null) {
            return Ask.refused(what + " is a prioritized list (firstAvailable), which Gantry does not read");
        }
        String cls = e.getDeviceClassName();
        if (!gpuClass.equals(cls) && !migClass.equals(cls)) {
            return Ask.refused(what + " asks for devices of class " + cls + ", not " + gpuClass + " or " + migClass);
        }
        if (e.getAllocationMode() != null && !"ExactCount".equals(e.getAllocationMode())) {
            return Ask.refused(what + " asks for allocationMode " + e.getAllocationMode() + " of " + cls + ", not a count (ExactCount)");
        }
        if (Boolean.TRUE.equals(e.getAdminAccess()) || e.getCapacity() != null) {
            return Ask.refused(what + " asks for " + (e.getCapacity() != null ? "capacity" : "admin access") + ", which Gantry does not give");
        }
        long count = e.getCount() == null ? 1 : e.getCount();
        if (count < 1 || count > 64) {
            return Ask.refused(what + " asks for " + count + " devices of " + cls);
        }
        List<String> selectors = e.getSelectors() == null ? List.of() : e.getSelectors().stream()
                .map(s -> s.getCel() == null ? String.valueOf(s) : s.getCel().getExpression()).toList();
        if (gpuClass.equals(cls)) {
            if (!selectors.isEmpty()) {
                return Ask.refused(what + " selects " + cls + " devices by " + String.join(" and ", selectors) + ", which Gantry does not read");
            }
            return new Ask((int) count, null, null, what + ": " + count + " of " + cls);
        }
        String profile = selectors.size() == 1 ? profileOf(selectors.getFirst(), driver) : null;
        if (profile == null) {
            return Ask.refused(what + " asks for " + cls + " devices " + (selectors.isEmpty() ? "of any profile" : "by " + String.join(" and ", selectors))
                    + ": Gantry reads one selector device.attributes['" + driver + "'].profile == '<profile>'");
        }
        return new Ask((int) count, profile, null, what + ": " + count + " of " + cls + " " + profile);
    }

    private static final Pattern PROFILE = Pattern.compile(
            "^\\s*device\\.attributes\\[\\s*(['\"])([^'\"]+)\\1\\s*]\\.profile\\s*==\\s*(['\"])([^'\"]+)\\3\\s*$");

    /** The profile in {@code device.attributes['<driver>'].profile == '<profile>'}, or null when the expression is anything else. */
    static String profileOf(String cel, String driver) {
        Matcher m = PROFILE.matcher(cel == null ? "" : cel);
        return m.matches() && driver.equals(m.group(2)) ? m.group(4) : null;
    }

    /** A readable claim's requests in order, with their device counts (the allocation gives each its share). */
    public static List<Request> requests(ResourceClaimSpec spec) {
        List<Request> out = new ArrayList<>();
        for (DeviceRequest r : spec.getDevices().getRequests()) {
            Long count = r.getExactly().getCount();
            out.add(new Request(r.getName(), count == null ? 1 : Math.toIntExact(count)));
        }
        return out;
    }
}
