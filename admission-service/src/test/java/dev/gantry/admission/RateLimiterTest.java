package dev.gantry.admission;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.admission.domain.RateLimiter;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class RateLimiterTest {

    /** A clock the test moves by hand. */
    static final class ManualClock extends Clock {
        Instant now = Instant.parse("2026-12-02T12:00:00Z");

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }
    }

    @Test
    void aBurstUpToCapacityThenWaitsForTheRefill() {
        ManualClock clock = new ManualClock();
        RateLimiter limiter = new RateLimiter(3, Duration.ofMinutes(1), clock);
        assertThat(limiter.tryAcquire("alice")).isZero();
        assertThat(limiter.tryAcquire("alice")).isZero();
        assertThat(limiter.tryAcquire("alice")).isZero();
        Duration wait = limiter.tryAcquire("alice");
        assertThat(wait).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(20));
        assertThat(limiter.tryAcquire("bob")).as("users have separate buckets").isZero();

        clock.now = clock.now.plus(Duration.ofSeconds(20));
        assertThat(limiter.tryAcquire("alice")).isZero();
        assertThat(limiter.tryAcquire("alice")).isPositive();
    }
}
