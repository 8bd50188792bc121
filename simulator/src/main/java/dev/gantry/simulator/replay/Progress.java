package dev.gantry.simulator.replay;

/** Told how far a replay is (0..1) with a short label, as often as the replay likes. */
@FunctionalInterface
public interface Progress {
    Progress NONE = (fraction, label) -> { };

    void update(double fraction, String label);
}
