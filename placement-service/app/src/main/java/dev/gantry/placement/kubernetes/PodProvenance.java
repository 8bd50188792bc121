package dev.gantry.placement.kubernetes;

import io.fabric8.kubernetes.api.model.Pod;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Tells the pods Gantry made from pods someone else made to look like them. Names and labels are
 * predictable, so anyone who may create pods in the namespace could make one named and labelled as
 * a job's next pod; only Gantry holds the key that signs the pod's namespace, name, job label and
 * attempt into the annotation {@value #ANNOTATION}.
 */
public final class PodProvenance {

    public static final String ANNOTATION = "gantry.dev/provenance";

    private final SecretKeySpec key;

    public PodProvenance(byte[] key) {
        if (key.length < 32) {
            throw new IllegalArgumentException("a signing key of at least 32 bytes is needed, got " + key.length);
        }
        this.key = new SecretKeySpec(key.clone(), "HmacSHA256");
    }

    /** The annotation's value for the pod Gantry makes under this name, for this gang and attempt. */
    public String sign(String namespace, String podName, String jobLabel, int attempt) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(key);
            byte[] digest = mac.doFinal((namespace + "\n" + podName + "\n" + jobLabel + "\n" + attempt).getBytes(StandardCharsets.UTF_8));
            return Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available", e);
        }
    }

    /** True only for a pod whose signature matches its own namespace, name, job label and attempt. */
    public boolean madeByGantry(Pod pod) {
        if (pod == null || pod.getMetadata() == null) {
            return false;
        }
        Map<String, String> labels = pod.getMetadata().getLabels() == null ? Map.of() : pod.getMetadata().getLabels();
        Map<String, String> annotations = pod.getMetadata().getAnnotations() == null ? Map.of() : pod.getMetadata().getAnnotations();
        String signature = annotations.get(ANNOTATION);
        String job = labels.get(KubernetesActuator.LABEL_JOB);
        String attempt = labels.get(KubernetesActuator.LABEL_ATTEMPT);
        if (signature == null || job == null || attempt == null || !attempt.matches("[0-9]{1,9}")) {
            return false;
        }
        String expected = sign(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), job, Integer.parseInt(attempt));
        return MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8), signature.getBytes(StandardCharsets.UTF_8));
    }
}
