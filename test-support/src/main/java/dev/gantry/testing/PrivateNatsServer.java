package dev.gantry.testing;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A nats-server of the test's own (JetStream on, a store in a temporary folder, a free port on
 * 127.0.0.1), so a test can stop and restart the broker under a running service without touching
 * the shared one on 4222. Use it with {@code @QuarkusTestResource(value = PrivateNatsServer.class,
 * restrictToAnnotatedClass = true)}: it points {@code gantry.nats.url} at itself and injects itself
 * into the test's field of this type. The store survives a restart, as a real broker's would.
 */
public class PrivateNatsServer implements QuarkusTestResourceLifecycleManager {

    private int port;
    private Path store;
    private Path log;
    private Process process;

    @Override
    public Map<String, String> start() {
        try {
            port = freePort();
            store = Files.createTempDirectory("gantry-nats-store-");
            log = Files.createTempFile("gantry-nats-", ".log");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        startServer();
        return Map.of("gantry.nats.url", url());
    }

    @Override
    public void inject(TestInjector testInjector) {
        testInjector.injectIntoFields(this, new TestInjector.MatchesType(PrivateNatsServer.class));
    }

    public String url() {
        return "nats://127.0.0.1:" + port;
    }

    /** Starts the server (again) on the same port and store and waits until it accepts connections. */
    public synchronized void startServer() {
        try {
            process = new ProcessBuilder(binary(), "-a", "127.0.0.1", "-p", String.valueOf(port), "-js",
                    "-sd", store.toString())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            while (System.nanoTime() < deadline) {
                if (!process.isAlive()) {
                    throw new IllegalStateException("nats-server exited with " + process.exitValue() + ": " + Files.readString(log));
                }
                try (Socket socket = new Socket()) {
                    socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
                    return;
                } catch (IOException notYet) {
                    Thread.sleep(100);
                }
            }
            throw new IllegalStateException("nats-server did not listen on " + port + " within 15 s: " + Files.readString(log));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Kills the server at once (SIGKILL): its clients see their connections drop, as on a crash. */
    public synchronized void killServer() {
        if (process == null) {
            return;
        }
        process.destroyForcibly();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("nats-server did not exit");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        process = null;
    }

    @Override
    public void stop() {
        killServer();
        if (store != null) {
            try (Stream<Path> files = Files.walk(store)) {
                files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            } catch (IOException ignored) {
                // a temporary folder
            }
        }
        if (log != null) {
            log.toFile().delete();
        }
    }

    /** nats-server on the PATH or where Debian's package puts it; a clear failure when it is missing. */
    static String binary() {
        List<Path> candidates = new ArrayList<>();
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (!dir.isBlank()) {
                candidates.add(Path.of(dir, "nats-server"));
            }
        }
        candidates.add(Path.of("/usr/sbin/nats-server"));
        candidates.add(Path.of("/usr/local/sbin/nats-server"));
        return candidates.stream().filter(Files::isExecutable).findFirst().map(Path::toString)
                .orElseThrow(() -> new IllegalStateException("nats-server is not installed (not on the PATH nor in /usr/sbin):"
                        + " this test starts and restarts a broker of its own; install it with apt-get install nats-server"
                        + " (bin/lib/infra.sh does)"));
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
