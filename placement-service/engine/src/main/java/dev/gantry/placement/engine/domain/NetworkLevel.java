package dev.gantry.placement.engine.domain;

import java.util.Locale;

/** Network domain a gang must (or would like to) stay in, from the loosest to the tightest. */
public enum NetworkLevel {
    ANY, ZONE, SPINE, LEAF, NODE;

    public String jsonName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** True when this level is at least as tight as {@code other} (NODE is the tightest). */
    public boolean atLeastAsTightAs(NetworkLevel other) {
        return ordinal() >= other.ordinal();
    }

    public static NetworkLevel parse(String s) {
        for (NetworkLevel l : values()) {
            if (l.jsonName().equals(s)) {
                return l;
            }
        }
        throw new IllegalArgumentException("must be one of any, node, leaf, spine, zone");
    }
}
