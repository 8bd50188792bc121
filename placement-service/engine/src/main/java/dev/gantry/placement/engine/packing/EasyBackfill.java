package dev.gantry.placement.engine.packing;

import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.Scenario;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * EASY backfilling's bookkeeping (Lifka's; Slurm's backfill with one reservation), one job at a
 * time in the caller's order: a job starts while it fits; the first that does not (the head)
 * gets one reservation: the earliest estimated time at which it fits once running work ends,
 * and the GPUs it would take then. A later job may start if it ends (by its estimate) before
 * that time, or if it keeps off the reserved GPUs, so the head never starts later than its
 * reservation when the estimates hold.
 *
 * <p>With {@code maxReservations} above one (towards conservative backfilling), the first that many
 * jobs that do not fit each get a reservation, in order: a later head's reservation is the earliest
 * time at which it fits on GPUs no earlier reservation holds (an earlier reservation's GPUs count
 * as taken from now on, a simplification of conservative backfilling's time profile that can only
 * make a later reservation later); a job may then use a reservation's GPUs only if it ends before
 * that reservation starts. One reservation is EASY, as before.
 *
 * <p>Per queue ({@code perQueue}): each queue's first {@code maxReservations} jobs that do not fit
 * get a reservation (made as above, in the order offered), so the head of one queue never leaves
 * another queue's head without one: with a single global reservation a gang of a second queue
 * waits unprotected, and a stream of small jobs can keep taking the GPUs it needs.
 *
 * <p>Runtime estimates: a pending job's {@code estimatedRuntimeSeconds}; a running job's end
 * comes from {@code estimatedEnd}, which the caller must supply (a scenario does not carry it).
 */
public final class EasyBackfill {

    /** What {@link #offer} did with a job. */
    public enum Outcome {
        /** Placed now: {@link #lastFit()} says where. */
        STARTED,
        /** Its queue has no room for even its smallest gang. */
        OVER_CAPABILITY,
        /** It fits only by delaying the head past its reservation. */
        HELD_BACK,
        /** It is the head: {@link #reservation()} is its. */
        RESERVED,
        /** It does not fit now and would not even once every running job with an estimate has ended. */
        NEVER_FITS
    }

    /** The head's reservation: from when it can start, and the GPUs it will take then. */
    public record Reservation(String head, long start, List<GangPacker.Assigned> gpus) {

        /** Whether a job ending at {@code end} (absolute seconds) is gone before the head starts. */
        public boolean endsInTime(long end) {
            return end <= start;
        }
    }

    /** What holds GPUs until an estimated end: a running job or a gang started by this pass. */
    private record Holder(long end, RunningJob running, List<GangPacker.Assigned> placed) {
    }

    private final long now;
    private final GangPacker packer;
    private final ClusterState state;
    private final QueueLedger ledger;
    private final int maxReservations;
    private final boolean perQueue;
    private final java.util.Map<String, Integer> reservedByQueue = new java.util.HashMap<>();
    private final List<Holder> holders = new ArrayList<>();
    /** In the order they were made (the first is the head's). */
    private final List<Reservation> reservations = new ArrayList<>();
    /** The reservations by start, earliest first. */
    private final List<Reservation> byStart = new ArrayList<>();
    /**
     * views[k]: the current state with the GPUs of the k earliest-starting reservations also
     * taken, where a job that ends after the k-th start (and no later start) may go; built on
     * demand (null until then), views[0] is the state itself.
     */
    private ClusterState[] views = new ClusterState[1];
    private GangPacker.GangFit lastFit;

    /**
     * @param estimatedEnd running job name -> estimated end (absolute seconds, the scenario's
     *     clock); {@link Long#MAX_VALUE} when unknown (such a job never frees its GPUs for a reservation)
     */
    public EasyBackfill(Scenario sc, GangPacker packer, ToLongFunction<String> estimatedEnd) {
        this(sc, packer, estimatedEnd, 1);
    }

    /**
     * @param maxReservations how many jobs that do not fit get a reservation (1: EASY)
     */
    public EasyBackfill(Scenario sc, GangPacker packer, ToLongFunction<String> estimatedEnd, int maxReservations) {
        this(sc, packer, estimatedEnd, maxReservations, false);
    }

    /**
     * @param maxReservations how many jobs that do not fit get a reservation (1: EASY), in all or per queue
     * @param perQueue        {@code maxReservations} counts per queue, not in all
     */
    public EasyBackfill(Scenario sc, GangPacker packer, ToLongFunction<String> estimatedEnd, int maxReservations, boolean perQueue) {
        this.perQueue = perQueue;
        if (maxReservations < 1) {
            throw new IllegalArgumentException("maxReservations must be at least 1");
        }
        this.maxReservations = maxReservations;
        this.now = sc.nowSeconds();
        this.packer = packer;
        this.state = new ClusterState(sc);
        sc.running().forEach(state::occupy);
        this.ledger = new QueueLedger(sc);
        views[0] = state;
        for (RunningJob r : sc.running()) {
            holders.add(new Holder(estimatedEnd.applyAsLong(r.name()), r, null));
        }
    }

    /** When a pending job would end if it started at {@code now}; {@link Long#MAX_VALUE} without an estimate. */
    public static long estimatedEnd(PendingJob job, long now) {
        return job.estimatedRuntimeSeconds() == null ? Long.MAX_VALUE : now + job.estimatedRuntimeSeconds();
    }

    /** Starts the job if EASY lets it start now, else makes it a head if fewer than {@code maxReservations} have one. */
    public Outcome offer(PendingJob job) {
        return offer(job, null);
    }

    /**
     * As {@link #offer(PendingJob)}; when the job becomes a head, {@code earlier} (may be null) is taken
     * as its reservation instead of searching again if it is this job's and still ahead. For a caller
     * replaying time forward (the start-time forecast): a reservation made at an earlier time stays
     * right while the estimates hold, since every job started since respected it. It must be the
     * reservation this pass would make in the same position (the same heads before it).
     */
    public Outcome offer(PendingJob job, Reservation earlier) {
        List<Replica> reps = Replica.of(job);
        if (ledger.headroom(job.queue()) < GangPacker.minGangMilli(job, reps)) {
            return Outcome.OVER_CAPABILITY;
        }
        long end = estimatedEnd(job, now);
        GangPacker.GangFit fit = packer.place(view(end), job, reps);
        if (fit != null && fit.complete() && ledger.blockedBy(job.queue(), fit.gpuMilli()) == null) {
            for (GangPacker.Assigned a : fit.tasks()) {
                for (ClusterState v : views) {
                    if (v != null) {
                        v.take(a.node(), a.replica(), a.gpus());
                    }
                }
            }
            ledger.add(job.queue(), fit.gpuMilli());
            holders.add(new Holder(end, null, fit.tasks()));
            lastFit = fit;
            return Outcome.STARTED;
        }
        if (full(job.queue())) {
            return Outcome.HELD_BACK;
        }
        Reservation r = earlier != null && earlier.head().equals(job.name()) && earlier.start() > now ? earlier : reserve(job, reps);
        if (r == null) {
            return reservations.isEmpty() ? Outcome.NEVER_FITS : Outcome.HELD_BACK;
        }
        reservations.add(r);
        reservedByQueue.merge(job.queue(), 1, Integer::sum);
        int at = 0;
        while (at < byStart.size() && byStart.get(at).start() <= r.start()) {
            at++;
        }
        byStart.add(at, r);
        views = new ClusterState[reservations.size() + 1];
        views[0] = state;
        return Outcome.RESERVED;
    }

    /** Whether a job of {@code queue} that does not fit can no longer get a reservation (all of its queue's, or all, are made). */
    public boolean full(String queue) {
        return perQueue ? reservedByQueue.getOrDefault(queue, 0) >= maxReservations : reservations.size() >= maxReservations;
    }

    /** Where a job ending at {@code end} may go: the state with the GPUs of every reservation it does not end in time for taken. */
    private ClusterState view(long end) {
        int k = 0;
        while (k < byStart.size() && !byStart.get(k).endsInTime(end)) {
            k++;
        }
        if (views[k] == null) {
            ClusterState v = state.copy();
            for (int i = 0; i < k; i++) {
                takeReserved(v, byStart.get(i));
            }
            views[k] = v;
        }
        return views[k];
    }

    /** Marks a reservation's GPUs taken; taking a GPU that is busy now is harmless: such a state only answers "is it free and not reserved". */
    private static void takeReserved(ClusterState st, Reservation r) {
        for (GangPacker.Assigned a : r.gpus()) {
            st.take(a.node(), a.gpus(), a.replica().milli(), 0, 0);
        }
    }

    /** Where the last job that {@link Outcome#STARTED} went. */
    public GangPacker.GangFit lastFit() {
        return lastFit;
    }

    /** The head's reservation (the first made), or null while every job offered so far has started or can never fit. */
    public Reservation reservation() {
        return reservations.isEmpty() ? null : reservations.getFirst();
    }

    /** Every reservation made so far, the head's first, in the order their jobs were offered. */
    public List<Reservation> reservations() {
        return List.copyOf(reservations);
    }

    /** The cluster with the running jobs and the jobs this pass started. */
    public ClusterState state() {
        return state;
    }

    /**
     * Releases holders in order of estimated end until the head fits, on GPUs no earlier
     * reservation holds; null if it never does.
     */
    private Reservation reserve(PendingJob head, List<Replica> reps) {
        ClusterState future = state.copy();
        List<Holder> byEnd = new ArrayList<>(holders);
        byEnd.sort(Comparator.comparingLong(Holder::end));
        for (int i = 0; i < byEnd.size(); i++) {
            Holder h = byEnd.get(i);
            if (h.end() == Long.MAX_VALUE) {
                break;
            }
            release(future, h);
            // every holder ending at the same moment frees its GPUs before we look
            while (i + 1 < byEnd.size() && byEnd.get(i + 1).end() == h.end()) {
                release(future, byEnd.get(++i));
            }
            ClusterState probe = future;
            if (!reservations.isEmpty()) {
                probe = future.copy();
                for (Reservation r : reservations) {
                    takeReserved(probe, r);
                }
            }
            GangPacker.GangFit fit = packer.place(probe, head, reps);
            if (fit != null && fit.complete()) {
                return new Reservation(head.name(), h.end(), fit.tasks());
            }
        }
        return null;
    }

    private static void release(ClusterState st, Holder h) {
        if (h.running() != null) {
            st.release(h.running());
        } else {
            h.placed().forEach(a -> st.release(a.node(), a.replica(), a.gpus()));
        }
    }
}
