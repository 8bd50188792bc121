package dev.gantry.placement.engine.domain;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * MIG profiles as NVIDIA spells them ({@code 1g.10gb}, {@code 3g.40gb}, {@code 1g.10gb+me}, {@code 1c.3g.40gb}),
 * the rule of contracts' {@code MigProfile} (the engine depends on no other module). A device of a profile
 * counts as its compute slices of seven of a GPU (rounded down: seven {@code 1g} devices are 994 milli, never
 * more than the GPU) wherever GPUs are added up: queue capability, guarantee, fair share, priority-weighted GPUs.
 * Seven is the slice count of A100, H100, H200 and B200; an A30 (four slices) is undercounted.
 */
public final class MigProfiles {

    private static final Pattern PROFILE = Pattern.compile("^(?:[1-7]c\\.)?([1-7])g\\.[1-9][0-9]{0,3}gb(?:[+-][a-z]{1,8})*$");

    private MigProfiles() {
    }

    public static boolean valid(String profile) {
        return profile != null && PROFILE.matcher(profile).matches();
    }

    /** One device of the profile in thousandths of a GPU: {@code 1000 * slices / 7}. */
    public static int milli(String profile) {
        Matcher m = PROFILE.matcher(profile == null ? "" : profile);
        if (!m.matches()) {
            throw new IllegalArgumentException("not a MIG profile such as 1g.10gb: " + profile);
        }
        return 1000 * Integer.parseInt(m.group(1)) / 7;
    }
}
