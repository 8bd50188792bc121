package dev.gantry.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A task's log goes out in bounded chunks, each from where the receiver's copy ends. */
class LogShipperTest {

    @TempDir
    Path dir;

    /** Stands in for placement: takes a chunk only where its copy ends, answers where that is. */
    static final class Receiver implements LogShipper.Sink {
        final ByteArrayOutputStream copy = new ByteArrayOutputStream();
        final List<Integer> sizes = new ArrayList<>();

        @Override
        public long send(long offset, byte[] data, int length) {
            sizes.add(length);
            if (offset == copy.size()) {
                copy.write(data, 0, length);
            }
            return copy.size();
        }
    }

    @Test
    void theLogGoesOutInBoundedChunksAndOnlyWhatIsNew() throws Exception {
        Path log = dir.resolve("task.log");
        byte[] big = new byte[LogShipper.CHUNK_BYTES * 2 + 100];
        java.util.Arrays.fill(big, (byte) 'a');
        Files.write(log, big);
        Receiver placement = new Receiver();
        LogShipper shipper = new LogShipper(log);
        assertThat(shipper.ship(placement, 2)).isFalse(); // two chunks a run: 100 bytes wait for the next
        assertThat(placement.sizes).containsExactly(LogShipper.CHUNK_BYTES, LogShipper.CHUNK_BYTES);
        assertThat(shipper.ship(placement, 2)).isTrue();
        Files.writeString(log, "more\n", java.nio.file.StandardOpenOption.APPEND);
        assertThat(shipper.ship(placement, 2)).isTrue();
        assertThat(placement.copy.toByteArray()).isEqualTo(Files.readAllBytes(log));
        assertThat(shipper.ship(placement, 2)).isTrue();
        assertThat(placement.sizes).hasSize(4); // nothing new: nothing sent
    }

    @Test
    void anAgentStartingOverGoesOnFromWherePlacementsCopyEnds() throws Exception {
        Path log = dir.resolve("task.log");
        Files.writeString(log, "step 1\nstep 2\n");
        Receiver placement = new Receiver();
        new LogShipper(log).ship(placement, 10);
        Files.writeString(log, "step 3\n", java.nio.file.StandardOpenOption.APPEND);
        LogShipper restarted = new LogShipper(log); // a new agent process knows nothing of what went out
        assertThat(restarted.ship(placement, 10)).isTrue();
        assertThat(placement.copy.toString()).isEqualTo("step 1\nstep 2\nstep 3\n");
    }

    @Test
    void aLogNotWrittenYetIsNothingToShip() throws Exception {
        assertThat(new LogShipper(dir.resolve("none.log")).ship(new Receiver(), 1)).isTrue();
    }
}
