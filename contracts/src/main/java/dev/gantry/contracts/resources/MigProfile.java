package dev.gantry.contracts.resources;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A MIG (Multi-Instance GPU) profile as NVIDIA's tools spell it: {@code <g>g.<memory>gb}, e.g.
 * {@code 1g.10gb}, {@code 3g.40gb}, {@code 7g.80gb}, optionally with a compute-instance prefix
 * ({@code 1c.3g.40gb}) and attribute suffixes ({@code 1g.10gb+me}, {@code 1g.24gb-me}). {@code g} is the
 * number of compute slices of the GPU instance: A100, H100, H200 and B200 have seven per GPU.
 *
 * <p>NVIDIA's device plugin (mixed strategy) names the resource of a profile {@code nvidia.com/mig-<profile>},
 * with {@code +} written as {@code .} (a resource name may not hold {@code +}): {@code 1g.10gb+me} is
 * {@code nvidia.com/mig-1g.10gb.me}.
 */
public final class MigProfile {

    /** The device plugin's resource name prefix of a MIG profile. */
    public static final String RESOURCE_PREFIX = "nvidia.com/mig-";

    /** Compute slices a whole GPU of the MIG-capable data-centre GPUs has; a slice counts as 1/7 of a GPU. */
    public static final int SLICES_PER_GPU = 7;

    private static final Pattern PROFILE = Pattern.compile("^(?:[1-7]c\\.)?([1-7])g\\.[1-9][0-9]{0,3}gb(?:[+-][a-z]{1,8})*$");
    /** The suffix of a device plugin resource: {@code 1g.10gb} or {@code 1g.10gb.me} (the {@code +} written as {@code .}). */
    private static final Pattern RESOURCE_SUFFIX = Pattern.compile("^((?:[1-7]c\\.)?[1-7]g\\.[1-9][0-9]{0,3}gb)((?:[.-][a-z]{1,8})*)$");

    private MigProfile() {
    }

    /** Whether {@code profile} is spelled as NVIDIA spells MIG profiles. */
    public static boolean valid(String profile) {
        return profile != null && PROFILE.matcher(profile).matches();
    }

    /** The compute slices of the profile's GPU instance ({@code 3g.40gb} -> 3). */
    public static int slices(String profile) {
        Matcher m = PROFILE.matcher(profile == null ? "" : profile);
        if (!m.matches()) {
            throw new IllegalArgumentException("not a MIG profile such as 1g.10gb: " + profile);
        }
        return Integer.parseInt(m.group(1));
    }

    /** What one device of the profile counts as, in thousandths of a GPU: its slices of seven, rounded down. */
    public static int milli(String profile) {
        return 1000 * slices(profile) / SLICES_PER_GPU;
    }

    /** The device plugin's resource name: {@code 1g.10gb+me} -> {@code nvidia.com/mig-1g.10gb.me}. */
    public static String resourceName(String profile) {
        return RESOURCE_PREFIX + profile.replace('+', '.');
    }

    /**
     * The profile a device plugin resource names ({@code nvidia.com/mig-1g.10gb.me} -> {@code 1g.10gb+me}), or null
     * when {@code resource} is not a MIG resource.
     */
    public static String ofResource(String resource) {
        if (resource == null || !resource.startsWith(RESOURCE_PREFIX)) {
            return null;
        }
        Matcher m = RESOURCE_SUFFIX.matcher(resource.substring(RESOURCE_PREFIX.length()));
        if (!m.matches()) {
            return null;
        }
        String attributes = m.group(2).replace('.', '+');
        String profile = m.group(1) + attributes;
        return valid(profile) ? profile : null;
    }
}
