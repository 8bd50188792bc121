package dev.gantry.agent;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One task running as a process of its own process group (started through {@code setsid}, so the
 * group's id is the process's pid and everything the task forks belongs to it), with stdout and
 * stderr together in one log file. Stopping sends SIGTERM to the whole group, waits the grace
 * period, then SIGKILLs the group. The exit code is the process's, 128 + the signal's number when a
 * signal ended it.
 */
public final class TaskProcess {

    /** What a task is: its command line, environment additions, working directory and log file. */
    public record Spec(List<String> command, Map<String, String> env, Path workingDir, Path logFile) {
    }

    private final Process process;
    private final Path logFile;
    private final CompletableFuture<Integer> exit;
    private volatile boolean stopRequested;

    private TaskProcess(Process process, Path logFile) {
        this.process = process;
        this.logFile = logFile;
        this.exit = process.onExit().thenApply(Process::exitValue);
    }

    /** Starts the task; its log file and working directory are created if missing. */
    public static TaskProcess start(Spec spec) throws IOException {
        if (spec.command().isEmpty()) {
            throw new IOException("the task has no command");
        }
        Files.createDirectories(spec.workingDir());
        Files.createDirectories(spec.logFile().getParent());
        List<String> argv = new ArrayList<>();
        argv.add("setsid"); // a new session and process group, led by the task: pgid = its pid
        argv.addAll(spec.command());
        ProcessBuilder builder = new ProcessBuilder(argv)
                .directory(spec.workingDir().toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(spec.logFile().toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        builder.environment().putAll(spec.env());
        return new TaskProcess(builder.start(), spec.logFile());
    }

    /** The process (and process group) id. */
    public long pid() {
        return process.pid();
    }

    public boolean alive() {
        return process.isAlive();
    }

    /** Completes with the exit code when the process ends. */
    public CompletableFuture<Integer> exit() {
        return exit;
    }

    /** Whether {@link #stop} was asked for (the exit is then the stop's doing). */
    public boolean stopRequested() {
        return stopRequested;
    }

    /**
     * SIGTERM to the task's process group, then SIGKILL to the group if the task has not ended after
     * {@code grace}. Returns the exit code. Safe to call more than once.
     */
    public int stop(Duration grace) throws InterruptedException {
        stopRequested = true;
        if (process.isAlive()) {
            if (!signalGroup(pid(), "TERM")) {
                process.destroy(); // no group to signal (it cannot be, but never wait on a task nothing was sent to)
            }
            if (!process.waitFor(Math.max(0, grace.toMillis()), TimeUnit.MILLISECONDS) && !signalGroup(pid(), "KILL")) {
                process.destroyForcibly();
            }
        }
        process.waitFor();
        // the leader is gone; anything left of its group (a child that ignored TERM) goes too
        signalGroup(pid(), "KILL");
        return process.exitValue();
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
