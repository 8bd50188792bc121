package dev.gantry.placement.engine.domain;

/** A node's place in the network tree; any key may be null (unknown). */
public record Topology(String zone, String spine, String leaf) {
    public static final Topology UNKNOWN = new Topology(null, null, null);

    /** The domain key at {@code level}, or null when unknown (NODE and ANY have no key here). */
    public String key(NetworkLevel level) {
        return switch (level) {
            case ZONE -> zone;
            case SPINE -> spine;
            case LEAF -> leaf;
            case ANY, NODE -> null;
        };
    }
}
