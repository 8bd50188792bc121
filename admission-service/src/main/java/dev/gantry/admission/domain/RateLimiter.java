package dev.gantry.admission.domain;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A token bucket per user: {@code capacity} submissions at once, refilled at {@code capacity} per
 * {@code period}. Keeps one runaway script from flooding the queue for everyone.
 */
public final class RateLimiter {

    private record Bucket(double tokens, long atNanos) {
    }

    private final int capacity;
    private final double tokensPerNano;
    private final Clock clock;
    private final ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();

    public RateLimiter(int capacity, Duration period, Clock clock) {
        if (capacity < 1 || period.isZero() || period.isNegative()) {
            throw new IllegalArgumentException("a rate limit needs a capacity >= 1 and a positive period");
        }
        this.capacity = capacity;
        this.tokensPerNano = capacity / (double) period.toNanos();
        this.clock = clock;
    }

    /** Takes a token for {@code user}; returns zero when allowed, else how long until one is free. */
    public Duration tryAcquire(String user) {
        long now = clock.instant().getEpochSecond() * 1_000_000_000L + clock.instant().getNano();
        Duration[] wait = {Duration.ZERO};
        buckets.compute(user, (key, bucket) -> {
            double tokens = bucket == null ? capacity : Math.min(capacity, bucket.tokens() + (now - bucket.atNanos()) * tokensPerNano);
            if (tokens >= 1) {
                return new Bucket(tokens - 1, now);
            }
            wait[0] = Duration.ofNanos((long) Math.ceil((1 - tokens) / tokensPerNano));
            return new Bucket(tokens, now);
        });
        return wait[0];
    }
}
