package dev.gantry.placement.window;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * How many jobs were offered their fast path within the last {@code spanNanos}. A burst is told by
 * this rate, not by how many fast paths happen to be waiting at one moment: how a burst reaches the
 * fast path (one job per transaction, or a batch of them at once) depends on the consumer's timing.
 */
final class RecentArrivals {

    private final long spanNanos;
    private final Deque<Long> times = new ArrayDeque<>();

    RecentArrivals(long spanNanos) {
        this.spanNanos = spanNanos;
    }

    /** Counts an arrival at {@code nowNanos}; the item is how many arrived within the span, this one included. */
    synchronized int record(long nowNanos) {
        times.addLast(nowNanos);
        return trim(nowNanos);
    }

    /** How many arrived within the span before {@code nowNanos}. */
    synchronized int count(long nowNanos) {
        return trim(nowNanos);
    }

    private int trim(long nowNanos) {
        while (!times.isEmpty() && nowNanos - times.peekFirst() > spanNanos) {
            times.removeFirst();
        }
        return times.size();
    }
}
