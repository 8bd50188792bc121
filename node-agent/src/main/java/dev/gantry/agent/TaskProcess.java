package dev.gantry.agent;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * One task running in a session and process group of its own, so it outlives the agent that
 * started it and a restarted agent can take it over ({@link #adopt}). It runs under a small
 * {@code sh} wrapper that leads the group (pgid = the wrapper's pid), runs the command, and writes
 * the command's exit status to an exit file when it ends: a restarted agent reads the exit of a task
 * that ended while no agent watched. The wrapper catches SIGTERM (a handler, not "ignore": handlers
 * are not inherited through exec, so the task gets SIGTERM as usual) so that it outlives its task
 * and writes its status. Stdout and stderr together go to one log file (the file descriptors are the
 * task's own, so nothing is lost while no agent runs). Stopping sends SIGTERM to the whole group,
 * waits the grace period, then SIGKILLs the group. The exit code is the command's, 128 + the
 * signal's number when a signal ended it.
 */
public final class TaskProcess {

    /** What a task is: its command line, environment additions, working directory and log file. */
    public record Spec(List<String> command, Map<String, String> env, Path workingDir, Path logFile) {
    }

    /** Runs the command (its arguments after the exit file's name), then writes its status to the exit file, atomically. */
    static final String WRAPPER = "trap : TERM INT HUP; f=$1; shift; \"$@\"; s=$?; echo $s > \"$f.tmp\" && mv -f \"$f.tmp\" \"$f\"; exit $s";

    private static final ScheduledExecutorService WATCHER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "agent-adopted-tasks");
        t.setDaemon(true);
        return t;
    });

    private final long pid;
    private final long startTicks;
    private final Process process; // null for an adopted task (another agent process started it)
    private final Path logFile;
    private final Path exitFile;
    private final CompletableFuture<Integer> exit;
    private volatile boolean stopRequested;

    private TaskProcess(long pid, long startTicks, Process process, Path logFile, Path exitFile, CompletableFuture<Integer> exit) {
        this.pid = pid;
        this.startTicks = startTicks;
        this.process = process;
        this.logFile = logFile;
        this.exitFile = exitFile;
        this.exit = exit;
    }

    /** Starts the task (its status goes to {@code <log file>.exit}); its log file and working directory are created if missing. */
    public static TaskProcess start(Spec spec) throws IOException {
        return start(spec, Path.of(spec.logFile() + ".exit"));
    }

    /** Starts the task; the wrapper writes its exit status to {@code exitFile}. */
    public static TaskProcess start(Spec spec, Path exitFile) throws IOException {
        if (spec.command().isEmpty()) {
            throw new IOException("the task has no command");
        }
        Files.createDirectories(spec.workingDir());
        Files.createDirectories(spec.logFile().getParent());
        Files.createDirectories(exitFile.getParent());
        Files.deleteIfExists(exitFile);
        List<String> argv = new ArrayList<>(List.of("setsid", "sh", "-c", WRAPPER, "gantry-task", exitFile.toString()));
        argv.addAll(spec.command());
        ProcessBuilder builder = new ProcessBuilder(argv)
                .directory(spec.workingDir().toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(spec.logFile().toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        builder.environment().putAll(spec.env());
        Process process = builder.start();
        long ticks = startTicks(process.pid());
        // the wrapper's status file when it wrote one; else the wrapper itself was killed (SIGKILL to the group)
        CompletableFuture<Integer> exit = process.onExit().thenApply(p -> {
            Integer written = readExitFile(exitFile);
            return written != null ? written : p.exitValue();
        });
        return new TaskProcess(process.pid(), ticks, process, spec.logFile(), exitFile, exit);
    }

    /**
     * Takes over a task a previous run of the agent started: {@code pid} and {@code startTicks} as
     * recorded then. Its exit completes with the exit file's status, or with null when the task is
     * gone without one (it was killed with its wrapper, or the machine restarted): lost.
     */
    public static TaskProcess adopt(long pid, long startTicks, Path logFile, Path exitFile) {
        CompletableFuture<Integer> exit = new CompletableFuture<>();
        TaskProcess adopted = new TaskProcess(pid, startTicks, null, logFile, exitFile, exit);
        Runnable check = new Runnable() {
            @Override
            public void run() {
                Integer written = readExitFile(exitFile);
                if (written != null || !adopted.alive()) {
                    exit.complete(written != null ? written : readExitFile(exitFile));
                } else {
                    WATCHER.schedule(this, 200, TimeUnit.MILLISECONDS);
                }
            }
        };
        check.run();
        return adopted;
    }

    /** The wrapper's (and the process group's) id. */
    public long pid() {
        return pid;
    }

    /** When the wrapper started, in clock ticks after boot ({@code /proc/<pid>/stat}): with the pid, names the process for good. */
    public long startTicks() {
        return startTicks;
    }

    public Path exitFile() {
        return exitFile;
    }

    public Path logFile() {
        return logFile;
    }

    /** Whether the wrapper still runs (neither gone, nor a zombie, nor a later process that reuses its pid). */
    public boolean alive() {
        if (process != null) {
            return process.isAlive();
        }
        String[] stat = stat(pid);
        return stat != null && !"Z".equals(stat[0]) && Long.parseLong(stat[19]) == startTicks;
    }

    /** Completes with the exit code when the task ends; with null for an adopted task that vanished without one. */
    public CompletableFuture<Integer> exit() {
        return exit;
    }

    /** Whether {@link #stop} was asked for (the exit is then the stop's doing). */
    public boolean stopRequested() {
        return stopRequested;
    }

    /**
     * SIGTERM to the task's process group, then SIGKILL to the group if the task has not ended after
     * {@code grace}. Returns the exit code (null: an adopted task that left none). Safe to call more than once.
     */
    public Integer stop(Duration grace) throws InterruptedException {
        stopRequested = true;
        if (alive()) {
            if (!signalGroup(pid, "TERM") && process != null) {
                process.destroy(); // no group to signal (it cannot be, but never wait on a task nothing was sent to)
            }
            if (!awaitExit(grace) && alive() && !signalGroup(pid, "KILL") && process != null) {
                process.destroyForcibly();
            }
        }
        Integer code;
        try {
            code = exit.get(30, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            code = null;
        }
        // the leader is gone; anything left of its group (a child that ignored TERM) goes too
        signalGroup(pid, "KILL");
        return code;
    }

    private boolean awaitExit(Duration grace) throws InterruptedException {
        try {
            exit.get(Math.max(0, grace.toMillis()), TimeUnit.MILLISECONDS);
            return true;
        } catch (java.util.concurrent.TimeoutException e) {
            return false;
        } catch (java.util.concurrent.ExecutionException e) {
            return true;
        }
    }

    /** Sends a signal to a whole process group; false when there was none to signal. */
    public static boolean signalGroup(long pgid, String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, "--", "-" + pgid)
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return kill.waitFor() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The fields of {@code /proc/<pid>/stat} after the command's name (state first), or null when there is no such process. */
    static String[] stat(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", String.valueOf(pid), "stat"));
            return stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** A process's start time in clock ticks after boot; -1 when it is gone. */
    static long startTicks(long pid) {
        String[] stat = stat(pid);
        return stat == null ? -1 : Long.parseLong(stat[19]);
    }

    static Integer readExitFile(Path exitFile) {
        try {
            return Integer.valueOf(Files.readString(exitFile).strip());
        } catch (IOException | NumberFormatException e) {
            return null;
        }
    }

    /** Writes {@code text} to {@code file} whole or not at all. */
    static void writeAtomically(Path file, String text) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, text, StandardCharsets.UTF_8);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /** The last {@code lines} lines of the log, at most {@code maxChars} characters. */
    public String logTail(int lines, int maxChars) {
        return tail(logFile, lines, maxChars);
    }

    /** The last {@code lines} lines of a file (at most {@code maxChars} characters); empty when it cannot be read. */
    public static String tail(Path file, int lines, int maxChars) {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
            long length = f.length();
            int read = (int) Math.min(length, (long) maxChars * 4);
            byte[] bytes = new byte[read];
            f.seek(length - read);
            f.readFully(bytes);
            String text = new String(bytes, StandardCharsets.UTF_8);
            if (text.endsWith("\n")) {
                text = text.substring(0, text.length() - 1);
            }
            String[] all = text.split("\n", -1);
            int from = Math.max(read < length ? 1 : 0, all.length - lines); // the first line of a partial read is cut
            String joined = String.join("\n", java.util.Arrays.asList(all).subList(Math.min(from, all.length), all.length));
            return joined.length() <= maxChars ? joined : joined.substring(joined.length() - maxChars);
        } catch (IOException e) {
            return "";
        }
    }
}
