package dev.gantry.placement.engine.domain;

/** Tolerates taints with the same key; a null value tolerates every value of that key. */
public record Toleration(String key, String value) {
    public boolean tolerates(Taint taint) {
        return java.util.Objects.equals(key, taint.key()) && (value == null || value.equals(taint.value()));
    }
}
