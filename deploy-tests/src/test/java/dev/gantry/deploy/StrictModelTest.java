package dev.gantry.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import org.junit.jupiter.api.Test;

/** The parser the manifest tests rely on rejects what a cluster would reject or silently ignore. */
class StrictModelTest {

    private static final String DEPLOYMENT = """
            apiVersion: apps/v1
            kind: Deployment
            metadata:
              name: x
            spec:
              replicas: 2
              selector:
                matchLabels: {app: x}
              template:
                metadata:
                  labels: {app: x}
                spec:
                  containers:
                    - name: x
                      image: ghcr.io/gantry/x:1.0.0-native
            """;

    @Test
    void a_valid_object_parses_into_its_model() {
        assertThat(StrictModel.parse(DEPLOYMENT + "---\n" + DEPLOYMENT.replace("name: x\nspec", "name: y\nspec")))
                .hasSize(2).allSatisfy(o -> assertThat(o).isInstanceOf(Deployment.class));
        assertThat(((Deployment) StrictModel.parse(DEPLOYMENT).getFirst()).getSpec().getReplicas()).isEqualTo(2);
    }

    @Test
    void an_unknown_field_fails_at_the_top_and_deep_inside() {
        assertThatThrownBy(() -> StrictModel.parse(DEPLOYMENT.replace("replicas: 2", "replicaz: 2")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Deployment x").hasMessageContaining("replicaz");
        assertThatThrownBy(() -> StrictModel.parse(DEPLOYMENT.replace("image: ghcr", "imagePullPolicyy: Always\n      image: ghcr")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("imagePullPolicyy");
    }

    @Test
    void a_wrongly_typed_field_fails() {
        assertThatThrownBy(() -> StrictModel.parse(DEPLOYMENT.replace("replicas: 2", "replicas: two")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Deployment x");
    }

    @Test
    void a_kind_gantry_does_not_deploy_fails() {
        assertThatThrownBy(() -> StrictModel.parse(DEPLOYMENT.replace("kind: Deployment", "kind: DaemonSet")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("apps/v1/DaemonSet x");
        assertThatThrownBy(() -> StrictModel.parse(DEPLOYMENT.replace("apps/v1", "apps/v1beta1")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a kind Gantry deploys");
    }
}
