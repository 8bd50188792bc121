package dev.gantry.admission.domain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class StreamAllowanceTest {

    @Test
    void countsPerUserAndFreesAPlaceOnClose() {
        StreamAllowance allowance = new StreamAllowance(2);
        assertThat(allowance.tryOpen("alice")).isTrue();
        assertThat(allowance.tryOpen("alice")).isTrue();
        assertThat(allowance.tryOpen("alice")).isFalse();
        assertThat(allowance.tryOpen("bob")).isTrue();
        assertThat(allowance.openBy("alice")).isEqualTo(2);
        allowance.close("alice");
        assertThat(allowance.tryOpen("alice")).isTrue();
        assertThat(allowance.total()).isEqualTo(3);
    }

    @Test
    void aRefusedStreamIsNotCountedAndClosingTooOftenNeverGoesNegative() {
        StreamAllowance allowance = new StreamAllowance(1);
        allowance.tryOpen("alice");
        allowance.tryOpen("alice");
        allowance.close("alice");
        allowance.close("alice");
        assertThat(allowance.openBy("alice")).isZero();
        assertThat(allowance.total()).isZero();
    }

    @Test
    void concurrentOpensNeverExceedTheLimit() throws Exception {
        StreamAllowance allowance = new StreamAllowance(5);
        AtomicInteger granted = new AtomicInteger();
        try (ExecutorService pool = Executors.newFixedThreadPool(8)) {
            for (int i = 0; i < 200; i++) {
                pool.submit(() -> {
                    if (allowance.tryOpen("alice")) {
                        granted.incrementAndGet();
                    }
                });
            }
            pool.shutdown();
            assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(granted.get()).isEqualTo(5);
    }

    @Test
    void needsAPositiveLimit() {
        assertThatThrownBy(() -> new StreamAllowance(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
