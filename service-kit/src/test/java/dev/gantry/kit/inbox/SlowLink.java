package dev.gantry.kit.inbox;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * A TCP relay to a broker that holds what the client sends for a fixed time before passing it on
 * (what the broker sends back is not held): a client whose requests reach the broker late, as on
 * a starved machine, made repeatable.
 */
final class SlowLink implements AutoCloseable {

    private record Chunk(long dueNanos, byte[] bytes) {
    }

    private final ServerSocket server;
    private final String host;
    private final int port;
    private final long delayNanos;

    SlowLink(String host, int port, Duration delay) throws IOException {
        this.server = new ServerSocket();
        this.server.bind(new InetSocketAddress("127.0.0.1", 0));
        this.host = host;
        this.port = port;
        this.delayNanos = delay.toNanos();
        Thread.ofVirtual().start(this::accept);
    }

    String url() {
        return "nats://127.0.0.1:" + server.getLocalPort();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Socket broker = new Socket(host, port);
                BlockingQueue<Chunk> held = new LinkedBlockingQueue<>();
                Thread.ofVirtual().start(() -> read(client, held));
                Thread.ofVirtual().start(() -> release(held, broker));
                Thread.ofVirtual().start(() -> pump(broker, client));
            } catch (IOException e) {
                return;
            }
        }
    }

    private void read(Socket from, BlockingQueue<Chunk> held) {
        byte[] buffer = new byte[64 * 1024];
        try (InputStream in = from.getInputStream()) {
            for (int n; (n = in.read(buffer)) > 0;) {
                held.add(new Chunk(System.nanoTime() + delayNanos, Arrays.copyOf(buffer, n)));
            }
        } catch (IOException ignored) {
            // the client went away
        }
    }

    private void release(BlockingQueue<Chunk> held, Socket to) {
        try (OutputStream out = to.getOutputStream()) {
            while (true) {
                Chunk chunk = held.take();
                long wait = chunk.dueNanos() - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(Duration.ofNanos(wait));
                }
                out.write(chunk.bytes());
                out.flush();
            }
        } catch (IOException | InterruptedException ignored) {
            // either side went away
        }
    }

    private static void pump(Socket from, Socket to) {
        byte[] buffer = new byte[64 * 1024];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            for (int n; (n = in.read(buffer)) > 0;) {
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException ignored) {
            // either side went away
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
