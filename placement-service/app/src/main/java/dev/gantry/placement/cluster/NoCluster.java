package dev.gantry.placement.cluster;

import java.time.Duration;

/** Standalone mode: the allocation rows are the outcome; there is nothing to act on. */
public final class NoCluster implements ClusterActuator {

    @Override
    public boolean acts() {
        return false;
    }

    @Override
    public void launch(Gang gang) {
    }

    @Override
    public void evict(GangRef gang, Duration grace) {
    }

    @Override
    public void stop(GangRef gang) {
    }
}
