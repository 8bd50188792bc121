package dev.gantry.deploy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/** Renders a directory of deploy/k8s with {@code kubectl kustomize}, as {@code kubectl apply -k} would. */
final class Kustomize {

    /** Debian's kubernetes-client puts kubectl here (bin/lib/infra.sh ensure_kubectl); -Dgantry.kubectl overrides. */
    static final String KUBECTL = System.getProperty("gantry.kubectl", "/usr/bin/kubectl");

    private static final Map<String, String> RENDERED = new ConcurrentHashMap<>();

    private Kustomize() {
    }

    /** The repository root: the nearest directory holding deploy/k8s, from gantry.root (set by Maven) or the working directory up. */
    static Path root() {
        Path start = Path.of(System.getProperty("gantry.root", "")).toAbsolutePath();
        for (Path dir = start; dir != null; dir = dir.getParent()) {
            if (Files.isDirectory(dir.resolve("deploy/k8s"))) {
                return dir;
            }
        }
        throw new IllegalStateException("no deploy/k8s in " + start + " or above");
    }

    static Path k8s(String dir) {
        return root().resolve("deploy/k8s").resolve(dir);
    }

    /** The YAML stream kubectl renders for deploy/k8s/{dir}; rendered once per test run. */
    static String render(String dir) {
        return RENDERED.computeIfAbsent(dir, Kustomize::run);
    }

    private static String run(String dir) {
        Path target = k8s(dir);
        if (!Files.isRegularFile(target.resolve("kustomization.yaml"))) {
            throw new IllegalArgumentException("no kustomization.yaml in " + target);
        }
        try {
            Path err = Files.createTempFile("kustomize", ".err");
            Process process = new ProcessBuilder(List.of(KUBECTL, "kustomize", target.toString()))
                    .redirectError(err.toFile()).start();
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException("kubectl kustomize " + dir + " did not finish in 60 s");
            }
            String stderr = Files.readString(err);
            Files.delete(err);
            if (process.exitValue() != 0) {
                throw new IllegalStateException("kubectl kustomize " + dir + " failed: " + stderr);
            }
            return out;
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + KUBECTL + " (bin/lib/infra.sh ensure_kubectl installs it)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
