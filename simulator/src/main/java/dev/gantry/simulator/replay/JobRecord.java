package dev.gantry.simulator.replay;

/**
 * What happened to one job: {@code firstStart}/{@code end} are -1 when it never started/ended
 * (it could not fit before the replay ran out of events).
 */
public record JobRecord(String name, String queue, double gpus, long submit, long duration, long firstStart, long end, int preemptions) {
    public boolean finished() {
        return end >= 0;
    }

    public long queueingDelay() {
        return firstStart - submit;
    }

    public long jct() {
        return end - submit;
    }
}
