package dev.gantry.simulator.cli;

import dev.gantry.simulator.replay.Progress;
import java.io.PrintStream;
import java.util.Locale;

/** A one-line progress bar with an ETA on stderr, redrawn at most twice a second; spans several runs. */
final class ProgressBar implements Progress {
    private final PrintStream err;
    private final int runs;
    private final long start = System.nanoTime();
    private int run;
    private long lastDraw;

    ProgressBar(PrintStream err, int runs) {
        this.err = err;
        this.runs = Math.max(1, runs);
    }

    /** The next run starts (0-based). */
    void startRun(int index) {
        run = index;
    }

    @Override
    public void update(double fraction, String label) {
        long now = System.nanoTime();
        if (now - lastDraw < 500_000_000L && fraction < 1) {
            return;
        }
        lastDraw = now;
        double total = (run + Math.max(0, Math.min(1, fraction))) / runs;
        double elapsed = (now - start) / 1e9;
        String eta = total <= 0.001 ? "?" : duration(elapsed / total * (1 - total));
        int width = 30;
        int filled = (int) Math.round(total * width);
        err.printf(Locale.ROOT, "\r[%s%s] %5.1f%% elapsed %s ETA %s  %-50.50s", "#".repeat(filled), ".".repeat(width - filled), total * 100,
                duration(elapsed), eta, label);
        err.flush();
    }

    void done() {
        err.printf(Locale.ROOT, "\r%-130s\r", "");
        err.flush();
    }

    static String duration(double seconds) {
        long s = Math.round(seconds);
        return s >= 3600 ? String.format(Locale.ROOT, "%dh%02dm", s / 3600, s % 3600 / 60)
                : s >= 60 ? String.format(Locale.ROOT, "%dm%02ds", s / 60, s % 60) : s + "s";
    }
}
