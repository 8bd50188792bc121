package dev.gantry.placement.kubernetes;

import io.quarkus.test.junit.QuarkusTestProfile;
import java.util.Map;

/** The kubernetes binder with Lease leader election, against the fabric8 mock server; standalone tests are untouched. */
public class KubernetesModeProfile implements QuarkusTestProfile {

    static final String NAMESPACE = "gantry-test";

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of(
                "gantry.placement.binder", "kubernetes",
                "gantry.placement.kubernetes.namespace", NAMESPACE,
                "gantry.placement.kubernetes.retry.backoff", "20ms",
                "gantry.placement.leader-election.enabled", "true",
                "gantry.placement.leader-election.lease-duration", "4s",
                "gantry.placement.leader-election.renew-deadline", "3s",
                "gantry.placement.leader-election.retry-period", "500ms");
    }
}
