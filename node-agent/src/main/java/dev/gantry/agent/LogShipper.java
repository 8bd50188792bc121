package dev.gantry.agent;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Ships one task's log file to placement in chunks of at most {@value #CHUNK_BYTES} bytes, from where
 * placement says its copy ends: the agent calls out (as for its reports), so logs reach the services
 * wherever the agent can reach placement, with no port opened on the GPU host and nothing to
 * authenticate towards it. A chunk sent twice, or an agent restarted and starting over from byte 0,
 * changes nothing: placement answers where to go on from.
 */
final class LogShipper {

    /** The most one chunk carries (placement's bound). */
    static final int CHUNK_BYTES = 32 * 1024;

    /** Where chunks go. */
    interface Sink {
        /** Sends bytes {@code [offset, offset + length)} of {@code data}; returns where placement's copy now ends. */
        long send(long offset, byte[] data, int length) throws IOException, InterruptedException;
    }

    private final Path file;
    private long position;
    /** Set while a shipping run is queued: the periodic tick does not queue another. */
    final AtomicBoolean queued = new AtomicBoolean();

    LogShipper(Path file) {
        this.file = file;
    }

    /**
     * Sends what the file holds beyond the position, at most {@code maxChunks} chunks (the rest goes
     * with the next run). Returns true when the whole file went out.
     */
    boolean ship(Sink sink, int maxChunks) throws IOException, InterruptedException {
        byte[] buffer = new byte[CHUNK_BYTES];
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
            for (int i = 0; i < maxChunks; i++) {
                long length = f.length();
                if (position >= length) {
                    return true;
                }
                f.seek(position);
                int n = f.read(buffer, 0, (int) Math.min(CHUNK_BYTES, length - position));
                if (n <= 0) {
                    return true;
                }
                long next = sink.send(position, buffer, n);
                position = next; // where placement's copy ends: a restarted agent skips what placement has
            }
            return position >= f.length();
        } catch (java.io.FileNotFoundException e) {
            return true; // nothing written yet
        }
    }

    long position() {
        return position;
    }
}
