package dev.gantry.admission.domain;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class JobPlacementTest {

    private static JobPlacement.Task task(String node, Integer... gpus) {
        return new JobPlacement.Task("t", node, List.of(gpus), null);
    }

    @Test
    void theNodeListGroupsEachNodesGpusIntoRangesInTheOrderNodesFirstAppear() {
        JobPlacement placement = new JobPlacement(1, Instant.EPOCH, List.of(task("dgx-02", 2, 0), task("dgx-01", 3, 1, 2, 0),
                task("dgx-02", 7, 5), task("cpu-01")));
        assertThat(placement.nodeList()).isEqualTo("dgx-02[0,2,5,7],dgx-01[0-3],cpu-01");
        assertThat(new JobPlacement(1, Instant.EPOCH, List.of(task("a", 0, 1, 3, 4, 5, 7))).nodeList()).isEqualTo("a[0-1,3-5,7]");
        assertThat(new JobPlacement(1, Instant.EPOCH, List.of()).nodeList()).isEmpty();
    }

    @Test
    void itIsStoredAsJsonAndReadBack() {
        JobPlacement placement = new JobPlacement(2, Instant.parse("2026-12-06T10:00:00Z"),
                List.of(new JobPlacement.Task("worker-0", "dgx-01", List.of(0, 1), 500)));
        assertThat(JobPlacement.fromJson(placement.toJson())).isEqualTo(placement);
        assertThat(JobPlacement.fromJson(null)).isNull();
    }
}
