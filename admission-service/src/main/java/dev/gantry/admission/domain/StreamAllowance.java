package dev.gantry.admission.domain;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * How many live streams (job watches, console pages) each user has open, against a limit per user.
 * A stream is cheap for one user but not for a thousand forgotten tabs: past the limit a new one is
 * refused until the user closes one. Counts are per replica, which is where the cost is.
 */
public final class StreamAllowance {

    private final int perUser;
    private final ConcurrentMap<String, Integer> open = new ConcurrentHashMap<>();

    public StreamAllowance(int perUser) {
        if (perUser < 1) {
            throw new IllegalArgumentException("at least one stream per user, was " + perUser);
        }
        this.perUser = perUser;
    }

    /** Counts a new stream of {@code user}; false (and nothing counted) when the user has the limit open. */
    public boolean tryOpen(String user) {
        boolean[] opened = {false};
        open.compute(user, (u, n) -> {
            int count = n == null ? 0 : n;
            if (count >= perUser) {
                return n;
            }
            opened[0] = true;
            return count + 1;
        });
        return opened[0];
    }

    /** A stream of {@code user} ended (closed by the client, completed or failed). */
    public void close(String user) {
        open.computeIfPresent(user, (u, n) -> n <= 1 ? null : n - 1);
    }

    public int openBy(String user) {
        return open.getOrDefault(user, 0);
    }

    public int total() {
        return open.values().stream().mapToInt(Integer::intValue).sum();
    }

    public int perUser() {
        return perUser;
    }
}
