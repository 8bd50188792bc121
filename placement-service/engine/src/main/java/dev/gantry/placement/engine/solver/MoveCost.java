package dev.gantry.placement.engine.solver;

/**
 * What moving one running job costs in the soft score ({@code Migration cost}): {@code perMove} for
 * the stop, checkpoint and restart whatever the job's size, plus {@code perGpu} for each GPU it
 * holds (a bigger job loses more GPU-time while it stops and starts again). Part of the solver
 * profile; {@code Migration cost=N} in the weight overrides still scales the whole term.
 *
 * <p>What the amounts trade against (soft units: one stranded GPU is 100, one GPU of expected
 * fragmentation 1000): a move that places a waiting job always pays for itself, since unplaced GPUs
 * are counted a level higher, so these decide <em>which</em> moves make the room: a high
 * {@code perMove} prefers one bigger job moved to several small ones, a high {@code perGpu} the
 * reverse. Against soft gains alone (a preferred network, less fragmentation), a move is planned
 * only where the gain is above its cost (the live service carries out only the moves that make room
 * for a placement, see {@code MovesThatMakeRoom}).
 */
public record MoveCost(long perMove, long perGpu) {

    /** 1000 per move (ten stranded GPUs, one GPU of expected fragmentation) + 100 per GPU moved. */
    public static final MoveCost DEFAULT = new MoveCost(1000, 100);

    public MoveCost {
        if (perMove < 0 || perGpu < 0) {
            throw new IllegalArgumentException("move cost must be 0 or more (per move " + perMove + ", per GPU " + perGpu + ")");
        }
    }

    /** The cost of moving a job that holds {@code gpuMilli} milli-GPUs. */
    public long of(long gpuMilli) {
        return perMove + perGpu * gpuMilli / 1000;
    }

    /**
     * Parses {@code PER_MOVE,PER_GPU} (e.g. {@code 1000,100}); blank: the default.
     *
     * @throws IllegalArgumentException naming what is wrong
     */
    public static MoveCost parse(String text) {
        if (text == null || text.isBlank()) {
            return DEFAULT;
        }
        String[] parts = text.split(",");
        if (parts.length != 2) {
            throw new IllegalArgumentException("expected PER_MOVE,PER_GPU (like 1000,100), got \"" + text.trim() + "\"");
        }
        try {
            return new MoveCost(Long.parseLong(parts[0].trim()), Long.parseLong(parts[1].trim()));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("expected two whole numbers PER_MOVE,PER_GPU (like 1000,100), got \"" + text.trim() + "\"");
        }
    }

    @Override
    public String toString() {
        return perMove + "," + perGpu;
    }
}
