package dev.gantry.placement.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class PodProvenanceTest {

    private static final byte[] KEY = filled(7);
    private final PodProvenance provenance = new PodProvenance(KEY);

    private static byte[] filled(int value) {
        byte[] key = new byte[32];
        Arrays.fill(key, (byte) value);
        return key;
    }

    private Pod pod(String namespace, String name, String job, String attempt, String signature) {
        PodBuilder pod = new PodBuilder().withNewMetadata().withNamespace(namespace).withName(name)
                .addToLabels(KubernetesActuator.LABEL_JOB, job).addToLabels(KubernetesActuator.LABEL_ATTEMPT, attempt).endMetadata();
        if (signature != null) {
            pod.editMetadata().addToAnnotations(PodProvenance.ANNOTATION, signature).endMetadata();
        }
        return pod.build();
    }

    @Test
    void aPodSignedForItsOwnNamespaceNameJobAndAttemptIsGantrys() {
        String signature = provenance.sign("gantry", "train-1a2b-worker-0-1", "job-1", 1);
        assertThat(provenance.madeByGantry(pod("gantry", "train-1a2b-worker-0-1", "job-1", "1", signature))).isTrue();
    }

    @Test
    void theSignatureDoesNotCarryOverToAnotherPod() {
        String signature = provenance.sign("gantry", "train-1a2b-worker-0-1", "job-1", 1);
        assertThat(provenance.madeByGantry(pod("gantry", "train-1a2b-worker-1-1", "job-1", "1", signature))).as("name").isFalse();
        assertThat(provenance.madeByGantry(pod("other", "train-1a2b-worker-0-1", "job-1", "1", signature))).as("namespace").isFalse();
        assertThat(provenance.madeByGantry(pod("gantry", "train-1a2b-worker-0-1", "job-2", "1", signature))).as("job").isFalse();
        assertThat(provenance.madeByGantry(pod("gantry", "train-1a2b-worker-0-1", "job-1", "2", signature))).as("attempt").isFalse();
    }

    @Test
    void withoutTheKeyNoSignatureIsRight() {
        String forged = new PodProvenance(filled(8)).sign("gantry", "p", "job-1", 1);
        assertThat(provenance.madeByGantry(pod("gantry", "p", "job-1", "1", forged))).isFalse();
        assertThat(provenance.madeByGantry(pod("gantry", "p", "job-1", "1", null))).as("no annotation").isFalse();
        assertThat(provenance.madeByGantry(pod("gantry", "p", "job-1", "x", provenance.sign("gantry", "p", "job-1", 1)))).isFalse();
    }

    @Test
    void aShortKeyIsRefused() {
        assertThatThrownBy(() -> new PodProvenance(new byte[16])).isInstanceOf(IllegalArgumentException.class);
    }
}
