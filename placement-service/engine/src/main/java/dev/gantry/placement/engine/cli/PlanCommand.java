package dev.gantry.placement.engine.cli;

import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.json.PlanCodec;
import dev.gantry.placement.engine.json.ScenarioCodec;
import dev.gantry.placement.engine.json.ScenarioValidationException;
import dev.gantry.placement.engine.packing.GpuSpeeds;
import dev.gantry.placement.engine.planner.Planner;
import dev.gantry.placement.engine.planner.Planners;
import dev.gantry.placement.engine.planner.SolverProfile;
import dev.gantry.placement.engine.solver.MoveCost;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * {@code plan --scenario FILE [--planner timefold|greedy|fifo] [--profile fast|balanced|thorough] [--time-limit 2s]}:
 * prints the plan JSON on stdout, logs on stderr. Exit 0 for any plan (even with jobs unplaced),
 * 2 with one line naming the field for an invalid scenario or a bad argument.
 */
public final class PlanCommand {
    public static final int EXIT_OK = 0;
    public static final int EXIT_BAD_INPUT = 2;

    private static final String USAGE = "usage: plan --scenario FILE [--planner timefold|greedy|fifo] "
            + "[--profile fast|balanced|thorough] [--time-limit 2s] [--gpu-speeds default|none|MODEL=SPEED,...] [--move-weights PER_MOVE,PER_GPU] "
            + "[--reclaim-toward-fair-share true|false]";

    private PlanCommand() {
    }

    public static void main(String[] args) {
        // slf4j-simple writes to stderr; keep Timefold's INFO lines out of the way unless asked for
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"));
        System.exit(run(args, System.out, System.err));
    }

    /** The whole command, testable: returns the exit code. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        String scenarioFile = null;
        String plannerName = Planners.DEFAULT;
        String profileName = "balanced";
        String timeLimit = null;
        String gpuSpeeds = "default";
        String moveWeights = "";
        String towardFairShare = "false";
        Scenario scenario;
        Planner chosen;
        SolverProfile chosenProfile;
        try {
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                String value;
                int eq = a.indexOf('=');
                if (a.startsWith("--") && eq > 0) {
                    value = a.substring(eq + 1);
                    a = a.substring(0, eq);
                } else if (a.equals("--help") || a.equals("-h")) {
                    out.println(USAGE);
                    return EXIT_OK;
                } else {
                    if (i + 1 >= args.length) {
                        throw new IllegalArgumentException(a + ": needs a value; " + USAGE);
                    }
                    value = args[++i];
                }
                switch (a) {
                    case "--scenario" -> scenarioFile = value;
                    case "--planner" -> plannerName = value;
                    case "--profile" -> profileName = value;
                    case "--time-limit" -> timeLimit = value;
                    case "--gpu-speeds" -> gpuSpeeds = value;
                    case "--move-weights" -> moveWeights = value;
                    case "--reclaim-toward-fair-share" -> towardFairShare = value;
                    default -> throw new IllegalArgumentException("unknown argument " + a + "; " + USAGE);
                }
            }
            if (scenarioFile == null) {
                throw new IllegalArgumentException("--scenario: is required; " + USAGE);
            }
            String pn = plannerName;
            String prof = profileName;
            Planner planner = arg("--planner", () -> Planners.byName(pn));
            SolverProfile profile = arg("--profile", () -> SolverProfile.byName(prof));
            if (timeLimit != null) {
                String tl = timeLimit;
                profile = profile.withTimeLimit(arg("--time-limit", () -> SolverProfile.parseDuration(tl)));
            }
            String speeds = gpuSpeeds;
            profile = profile.withGpuSpeeds(arg("--gpu-speeds", () -> GpuSpeeds.parse(speeds)));
            String weights = moveWeights;
            profile = profile.withMoveCost(arg("--move-weights", () -> MoveCost.parse(weights)));
            // the service's gantry.placement.reclaim.toward-fair-share
            if (!towardFairShare.equals("true") && !towardFairShare.equals("false")) {
                throw new IllegalArgumentException("--reclaim-toward-fair-share: true or false, not " + towardFairShare);
            }
            profile = profile.withReclaimTowardFairShare(Boolean.parseBoolean(towardFairShare));
            String json;
            try {
                json = Files.readString(Path.of(scenarioFile), StandardCharsets.UTF_8);
            } catch (IOException | RuntimeException e) {
                throw new IllegalArgumentException("--scenario: cannot read " + scenarioFile + ": " + e.getClass().getSimpleName()
                        + (e.getMessage() == null ? "" : " " + e.getMessage()));
            }
            scenario = ScenarioCodec.read(json);
            chosen = planner;
            chosenProfile = profile;
        } catch (ScenarioValidationException e) {
            err.println("invalid scenario: " + oneLine(e.getMessage()));
            return EXIT_BAD_INPUT;
        } catch (IllegalArgumentException e) {
            err.println("bad argument: " + oneLine(e.getMessage()));
            return EXIT_BAD_INPUT;
        }
        // planning errors are bugs, not bad input: let them surface with their stack trace
        Plan plan = chosen.plan(scenario, chosenProfile);
        out.println(PlanCodec.write(plan));
        out.flush();
        return EXIT_OK;
    }

    private static <T> T arg(String name, java.util.function.Supplier<T> parse) {
        try {
            return parse.get();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(name + ": " + e.getMessage(), e);
        }
    }

    private static String oneLine(String s) {
        return s == null ? "" : s.replace('\r', ' ').replace('\n', ' ');
    }
}
