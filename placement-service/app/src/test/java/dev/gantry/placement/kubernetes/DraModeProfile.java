package dev.gantry.placement.kubernetes;

import java.util.HashMap;
import java.util.Map;

/** {@link KubernetesModeProfile} with Dynamic Resource Allocation on: pods get ResourceClaims instead of nvidia.com/gpu limits. */
public class DraModeProfile extends KubernetesModeProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        Map<String, String> config = new HashMap<>(super.getConfigOverrides());
        config.put("gantry.placement.kubernetes.dra.enabled", "true");
        return config;
    }
}
