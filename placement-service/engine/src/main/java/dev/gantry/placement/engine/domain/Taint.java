package dev.gantry.placement.engine.domain;

/** A node taint; only effect {@code NoSchedule} blocks placement. */
public record Taint(String key, String value, String effect) {
    public boolean blocksScheduling() {
        return effect == null || "NoSchedule".equals(effect);
    }
}
