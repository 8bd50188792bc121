package dev.gantry.agent;

import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The node agent: registers its node with the inventory and heartbeats, long-polls placement for
 * the tasks bound to its node, runs each as a process on exactly its GPUs, and reports when a task
 * starts and exits. A task whose assignment disappears (the job was cancelled, failed through a
 * sibling, or requeued) or is marked {@code stop} (preempted: with the grace left) is stopped:
 * SIGTERM to its process group, the grace period, SIGKILL.
 *
 * <p>Restart-safe through placement: the assignments are derived from placement's database, so an
 * agent that starts again finds them all. A task placement believes running that this agent does not
 * run (it was restarted; its processes were stopped when it went down, or are killed now through the
 * pid files it left) is reported {@code LOST}, and placement puts the job back in line.
 */
public final class NodeAgent {

    /** The agent's settings, from the command line. */
    public record Config(String node, URI inventory, URI placement, Supplier<String> token, Path workDir, String simulate,
            boolean forceSimulate, String address, Duration heartbeat, Duration poll, Duration defaultGrace, Path checkpointRoot, String containerRuntime) {
    }

    private final Config config;
    private final GantryClient client;
    /** Null: tasks run as plain processes. */
    private final ContainerRuntime runtime;
    private volatile boolean imageIgnoredSaid;
    private final Map<Assignment.Key, Running> running = new ConcurrentHashMap<>();
    /** Tasks this agent started and saw end, or reported lost: never started again. */
    private final Set<Assignment.Key> handled = ConcurrentHashMap.newKeySet();
    private final ExecutorService reporter = Executors.newSingleThreadExecutor(r -> daemon(r, "reports"));
    private final ExecutorService stoppers = Executors.newCachedThreadPool(r -> daemon(r, "stop"));
    private final ScheduledExecutorService heartbeats = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "heartbeat"));
    private volatile boolean shuttingDown;

    /** A task this agent runs (started, or taken over from a previous run). */
    private static final class Running {
        final Assignment assignment;
        final TaskProcess process;
        final Path stateFile;
        final LogShipper logs;
        volatile boolean reportExit = true;
        volatile boolean stopping;

        Running(Assignment assignment, TaskProcess process, Path stateFile) {
            this.assignment = assignment;
            this.process = process;
            this.stateFile = stateFile;
            this.logs = new LogShipper(process.logFile());
        }
    }

    /** A task a previous run of this agent left, found in the state directory at start: taken over if still assigned. */
    private record Left(Assignment.Key key, TaskProcess process, Path stateFile) {
    }

    /** Tasks a previous run left, not yet matched with an assignment (the first answer of placement settles them all). */
    private final Map<Assignment.Key, Left> left = new ConcurrentHashMap<>();
    private final ScheduledExecutorService logTicks = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "log-ticks"));

    public NodeAgent(Config config) {
        this.config = config;
        this.client = new GantryClient(config.inventory(), config.placement(), config.token());
        this.runtime = ContainerRuntime.find(config.containerRuntime(), System.getenv("PATH"));
        if (config.containerRuntime() != null && !config.containerRuntime().equalsIgnoreCase("none") && runtime == null) {
            log("container runtime %s is not on the PATH: tasks run as plain processes", config.containerRuntime());
        }
    }

    public static void main(String[] args) throws Exception {
        Config config;
        try {
            config = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("gantry node-agent: " + e.getMessage());
            System.err.println(USAGE);
            System.exit(2);
            return;
        }
        NodeAgent agent = new NodeAgent(config);
        Runtime.getRuntime().addShutdownHook(new Thread(agent::shutdown, "shutdown"));
        agent.run();
    }

    static final String USAGE = """
            usage: gantry-node-agent [--node NAME] [--inventory URL] [--placement URL]
                     [--token-file FILE] [--work-dir DIR] [--simulate N:MODEL] [--address ADDR]
                     [--heartbeat 15s] [--poll 30s] [--grace 10s] [--checkpoint-dir DIR]
                     [--container-runtime podman|docker|apptainer|none]
              gantry-node-agent: java -jar gantry-node-agent.jar, or the native executable (mvn -Pnative)
              token: --token-file, else $GANTRY_AGENT_TOKEN (an agent token: bin/gantry token NAME --agent NODE)""";

    static Config parse(String[] args) {
        Map<String, String> opts = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument " + a);
            }
            String key = a.substring(2);
            String value;
            int eq = key.indexOf('=');
            if (eq >= 0) {
                value = key.substring(eq + 1);
                key = key.substring(0, eq);
            } else if (i + 1 < args.length) {
                value = args[++i];
            } else {
                throw new IllegalArgumentException(a + " wants a value");
            }
            if (!Set.of("node", "inventory", "placement", "token-file", "work-dir", "simulate", "address", "heartbeat", "poll",
                    "grace", "checkpoint-dir", "container-runtime").contains(key)) {
                throw new IllegalArgumentException("unknown option --" + key);
            }
            opts.put(key, value);
        }
        String node = opts.getOrDefault("node", hostName());
        String tokenFile = opts.get("token-file");
        Supplier<String> token;
        if (tokenFile != null) {
            Path file = Path.of(tokenFile);
            token = () -> {
                try {
                    return Files.readString(file, StandardCharsets.UTF_8).strip(); // read at each call: a rotated token is picked up
                } catch (IOException e) {
                    throw new IllegalStateException("cannot read the token file " + file + ": " + e.getMessage(), e);
                }
            };
        } else {
            String fromEnv = System.getenv("GANTRY_AGENT_TOKEN");
            if (fromEnv == null || fromEnv.isBlank()) {
                throw new IllegalArgumentException("no token: give --token-file or set GANTRY_AGENT_TOKEN");
            }
            token = () -> fromEnv.strip();
        }
        Path workDir = Path.of(opts.getOrDefault("work-dir", ".gantry/agent/" + node)).toAbsolutePath();
        ContainerRuntime.find(opts.getOrDefault("container-runtime", "none"), ""); // a name it does not know is a usage error
        return new Config(node,
                URI.create(opts.getOrDefault("inventory", "http://127.0.0.1:8083")),
                URI.create(opts.getOrDefault("placement", "http://127.0.0.1:8084")),
                token,
                workDir,
                opts.getOrDefault("simulate", "8:A100"),
                opts.containsKey("simulate"),
                opts.getOrDefault("address", defaultAddress()),
                seconds(opts.getOrDefault("heartbeat", "15s"), "heartbeat"),
                seconds(opts.getOrDefault("poll", "30s"), "poll"),
                seconds(opts.getOrDefault("grace", "10s"), "grace"),
                opts.containsKey("checkpoint-dir") ? Path.of(opts.get("checkpoint-dir")).toAbsolutePath() : workDir.resolve("checkpoints"),
                opts.getOrDefault("container-runtime", "none"));
    }

    static Duration seconds(String text, String option) {
        String t = text.strip().toLowerCase(Locale.ROOT);
        try {
            if (t.endsWith("ms")) {
                return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
            }
            return Duration.ofSeconds(Long.parseLong(t.endsWith("s") ? t.substring(0, t.length() - 1) : t));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + option + " wants a duration such as 15s, not " + text);
        }
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName().toLowerCase(Locale.ROOT);
        } catch (UnknownHostException e) {
            return "localhost";
        }
    }

    private static String defaultAddress() {
        try {
            return InetAddress.getLocalHost().getHostAddress();
        } catch (UnknownHostException e) {
            return "127.0.0.1";
        }
    }

    /** Registers, heartbeats, and follows the assignments until the process is stopped. */
    public void run() throws InterruptedException {
        findLeftTasks();
        Discovery.Host host = config.forceSimulate()
                ? Discovery.simulated(config.simulate(), Runtime.getRuntime().availableProcessors() * 1000L, Discovery.osMemoryMiB())
                : Discovery.discover(config.simulate());
        Map<String, Object> spec = host.toNodeSpec(Map.of("gantry.dev/address", config.address()));
        log("node %s: %d %s GPUs%s, %d mCPU, %d MiB", config.node(), host.gpus(), host.gpuModel(),
                host.simulated() ? " (simulated)" : "", host.cpuMillis(), host.memoryMiB());
        registerUntilDone(spec);
        heartbeats.scheduleWithFixedDelay(() -> heartbeat(spec), config.heartbeat().toMillis(), config.heartbeat().toMillis(),
                TimeUnit.MILLISECONDS);
        logTicks.scheduleWithFixedDelay(this::shipLogs, 1, 1, TimeUnit.SECONDS);
        String known = null;
        while (!shuttingDown) {
            try {
                GantryClient.Assignments now = client.assignments(config.node(), config.poll(), known);
                known = now.version();
                reconcile(now.assignments());
            } catch (IOException | RuntimeException e) {
                if (shuttingDown) {
                    break;
                }
                log("assignments: %s (again in 2 s)", e.getMessage());
                known = null;
                Thread.sleep(2000);
            }
        }
    }

    private void registerUntilDone(Map<String, Object> spec) throws InterruptedException {
        long backoff = 1000;
        while (!shuttingDown) {
            try {
                client.register(config.node(), spec);
                log("registered node %s with %s", config.node(), config.inventory());
                return;
            } catch (IOException | RuntimeException e) {
                log("registering: %s (again in %d s)", e.getMessage(), backoff / 1000);
                Thread.sleep(backoff);
                backoff = Math.min(backoff * 2, 30_000);
            }
        }
    }

    private void heartbeat(Map<String, Object> spec) {
        try {
            client.heartbeat(config.node());
        } catch (GantryClient.CallFailed e) {
            if (e.status == 404) {
                try {
                    client.register(config.node(), spec); // removed meanwhile: describe it again
                } catch (IOException | RuntimeException again) {
                    log("registering again: %s", again.getMessage());
                } catch (InterruptedException again) {
                    Thread.currentThread().interrupt();
                }
            } else {
                log("heartbeat: %s", e.getMessage());
            }
        } catch (IOException | RuntimeException e) {
            log("heartbeat: %s", e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Brings what runs here in line with the assignments. */
    void reconcile(List<Assignment> assignments) {
        Set<Assignment.Key> assigned = new HashSet<>();
        for (Assignment a : assignments) {
            Assignment.Key key = a.key();
            assigned.add(key);
            Running r = running.get(key);
            if (r != null) {
                if (a.stop() && !r.stopping) {
                    log("task %s: preempted, stopping (grace %d s)", key, a.stopGraceSeconds());
                    stop(r, Duration.ofSeconds(a.stopGraceSeconds()), true);
                }
                continue;
            }
            Left found = left.remove(key);
            if (found != null) {
                adopt(a, found);
                continue;
            }
            if (handled.contains(key) || "EXITED".equals(a.reported())) {
                handled.add(key);
                continue;
            }
            if ("RUNNING".equals(a.reported())) {
                // placement says it runs, but not here: this agent restarted without it
                handled.add(key);
                log("task %s: placement has it running but this agent does not: reporting it lost", key);
                report(key, "LOST", null, null);
                continue;
            }
            if (a.stop()) {
                continue; // being preempted before it ever started: nothing to run
            }
            start(a);
        }
        for (Running r : running.values()) {
            if (!assigned.contains(r.assignment.key()) && !r.stopping) {
                Duration grace = r.assignment.grace(config.defaultGrace());
                log("task %s: no longer assigned (cancelled, failed or requeued): stopping (grace %d s)", r.assignment.key(),
                        grace.toSeconds());
                stop(r, grace, false);
            }
        }
        handled.retainAll(assigned);
        // what a previous run left that is no longer assigned (the job ended or moved meanwhile): stopped, not reported
        for (Left gone : List.copyOf(left.values())) {
            left.remove(gone.key());
            log("task %s: left by a previous run and no longer assigned: stopping it", gone.key());
            stoppers.submit(() -> {
                try {
                    gone.process().stop(config.defaultGrace());
                    Files.deleteIfExists(gone.stateFile());
                } catch (InterruptedException | IOException e) {
                    // the next start finds its state file again
                }
            });
        }
    }

    /** Takes over a task a previous run started: it goes on running, its exit is reported as if this run had started it. */
    private void adopt(Assignment a, Left found) {
        Assignment.Key key = a.key();
        handled.add(key);
        Running r = new Running(a, found.process(), found.stateFile());
        running.put(key, r);
        log("task %s: re-attached to pid %d left by a previous run", key, found.process().pid());
        if (a.reported() == null) {
            report(key, "STARTED", null, null);
        }
        found.process().exit().thenAccept(code -> exited(r, code));
        if (a.stop() && !r.stopping) {
            stop(r, Duration.ofSeconds(a.stopGraceSeconds()), true);
        }
    }

    private void start(Assignment a) {
        Assignment.Key key = a.key();
        Path jobDir = config.workDir().resolve("jobs").resolve(a.jobId().toString()).resolve(String.valueOf(a.attempt()));
        Path log = jobDir.resolve(a.task() + ".log");
        // per job, not per attempt: a job placed again (here, or on a node whose agent shares this directory) finds it
        Path checkpoints = config.checkpointRoot().resolve(a.jobId().toString());
        handled.add(key);
        try {
            Files.createDirectories(checkpoints);
            if (a.command().isEmpty()) {
                throw new IOException("task group " + a.taskGroup() + " has no command");
            }
            Path workingDir = a.workingDir() != null ? Path.of(a.workingDir()) : jobDir.resolve(a.task());
            if (a.workingDir() != null && !Files.isDirectory(workingDir)) {
                throw new IOException("the working directory " + workingDir + " does not exist on node " + config.node());
            }
            Map<String, String> env = a.environment(checkpoints);
            List<String> command = a.command();
            if (a.image() != null && runtime != null) {
                command = runtime.command(a, env, workingDir, checkpoints);
            } else if (a.image() != null && !imageIgnoredSaid) {
                imageIgnoredSaid = true;
                log("tasks' images are ignored: no container runtime configured or found (--container-runtime); they run as processes");
            }
            TaskProcess process = TaskProcess.start(new TaskProcess.Spec(command, env, workingDir, log), jobDir.resolve(a.task() + ".exit"));
            Path stateFile = stateFileOf(key);
            Files.createDirectories(stateFile.getParent());
            // what a restarted agent needs to take the task over: the process (pid and start time) and its files
            TaskProcess.writeAtomically(stateFile, GantryClient.JSON.writeValueAsString(Map.of("jobId", a.jobId().toString(),
                    "attempt", a.attempt(), "task", a.task(), "pid", process.pid(), "startTicks", process.startTicks(),
                    "log", log.toString(), "exitFile", process.exitFile().toString())));
            Running r = new Running(a, process, stateFile);
            running.put(key, r);
            log("task %s: started (pid %d, GPUs %s, rank %d of %d%s), log %s", key, process.pid(), a.gpus(), a.rank(), a.worldSize(),
                    command == a.command() ? "" : ", in " + runtime.kind().name().toLowerCase(java.util.Locale.ROOT) + " image " + a.image(), log);
            report(key, "STARTED", null, null);
            process.exit().thenAccept(code -> exited(r, code));
        } catch (IOException | RuntimeException e) {
            log("task %s: cannot start: %s", key, e.getMessage());
            report(key, "EXITED", 127, "gantry node-agent: cannot start the task: " + e.getMessage());
        }
    }

    private Path stateFileOf(Assignment.Key key) {
        return config.workDir().resolve("tasks").resolve(key.jobId() + "_" + key.attempt() + "_" + key.task() + ".json");
    }

    /** {@code code} null: a task taken over from a previous run that vanished without an exit status (lost). */
    private void exited(Running r, Integer code) {
        if (shuttingDown) {
            return; // its state file stays: the next run reports it
        }
        running.remove(r.assignment.key());
        try {
            Files.deleteIfExists(r.stateFile);
        } catch (IOException e) {
            // left behind: the next start finds it, sees the process is gone, and reports its exit file
        }
        Assignment.Key key = r.assignment.key();
        List<String> cleanup = runtime == null || r.assignment.image() == null ? null : runtime.cleanup(r.assignment);
        if (cleanup != null) {
            stoppers.submit(() -> removeContainer(cleanup));
        }
        shipRest(r); // the whole log is in before the exit is reported
        if (code == null) {
            log("task %s: gone without an exit status (killed with its wrapper, or the host restarted)", key);
            if (r.reportExit) {
                report(key, "LOST", null, null);
            }
            return;
        }
        log("task %s: exited with code %d", key, code);
        if (r.reportExit) {
            report(key, "EXITED", code, r.process.logTail(40, 8000));
        }
    }

    /** Removes a task's container (its client may have been SIGKILLed, leaving it running); best effort. */
    private static void removeContainer(List<String> command) {
        try {
            new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start()
                    .waitFor(60, TimeUnit.SECONDS);
        } catch (IOException e) {
            log("removing a container: %s", e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Every second: the new output of each running task goes to placement (in the reporter's order, after its STARTED). */
    private void shipLogs() {
        for (Running r : running.values()) {
            if (r.logs.queued.compareAndSet(false, true)) {
                reporter.submit(() -> {
                    r.logs.queued.set(false);
                    shipQuietly(r, 8);
                });
            }
        }
    }

    /** The rest of an ended task's log, before its exit is reported. */
    private void shipRest(Running r) {
        reporter.submit(() -> {
            for (int attempt = 0; attempt < 5 && !shuttingDown; attempt++) {
                if (shipQuietly(r, Integer.MAX_VALUE)) {
                    return;
                }
                try {
                    Thread.sleep(500L << attempt);
                } catch (InterruptedException e) {
                    return;
                }
            }
            log("task %s: the end of its log could not be shipped (it stays in %s)", r.assignment.key(), r.process.logFile());
        });
    }

    /** True when the whole log went out. */
    private boolean shipQuietly(Running r, int maxChunks) {
        try {
            return r.logs.ship((offset, data, length) -> client.shipLog(r.assignment.key(), offset, data, length), maxChunks);
        } catch (GantryClient.CallFailed e) {
            if (e.status / 100 == 4 && e.status != 429 && e.status != 401) {
                return true; // refused for good (the attempt ended before its first chunk came): nothing to retry
            }
            log("task %s: shipping its log: %s", r.assignment.key(), e.getMessage());
            return false;
        } catch (IOException | RuntimeException e) {
            log("task %s: shipping its log: %s", r.assignment.key(), e.getMessage());
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private void stop(Running r, Duration grace, boolean reportExit) {
        r.stopping = true;
        r.reportExit = reportExit;
        stoppers.submit(() -> {
            try {
                r.process.stop(grace);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    /** Sends a report, in order with the others, retrying while placement cannot be reached or answers 5xx/429/401. */
    private void report(Assignment.Key key, String state, Integer exitCode, String logTail) {
        reporter.submit(() -> {
            long backoff = 500;
            while (true) {
                try {
                    var outcome = client.report(key, state, exitCode, logTail);
                    log("task %s: reported %s%s: %s", key, state, exitCode == null ? "" : " " + exitCode, outcome.path("outcome").asText());
                    return;
                } catch (GantryClient.CallFailed e) {
                    if (e.status / 100 == 4 && e.status != 429 && e.status != 401) {
                        log("task %s: report %s refused, dropped: %s", key, state, e.getMessage());
                        return;
                    }
                    log("task %s: report %s: %s (again)", key, state, e.getMessage());
                } catch (IOException | RuntimeException e) {
                    log("task %s: report %s: %s (again)", key, state, e.getMessage());
                } catch (InterruptedException e) {
                    return;
                }
                try {
                    Thread.sleep(backoff);
                } catch (InterruptedException e) {
                    return;
                }
                backoff = Math.min(backoff * 2, 30_000);
            }
        });
    }

    /**
     * Tasks a previous run of this agent left (it was killed, or crashed, while they ran: they run in
     * sessions of their own and outlive it): each is taken over when placement still assigns it (its
     * exit, read from the exit file its wrapper writes, is reported as usual; one that vanished
     * without an exit file is reported lost), and stopped otherwise. A pid reused by another process
     * since is told apart by its start time.
     */
    private void findLeftTasks() {
        Path dir = config.workDir().resolve("tasks");
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*.json")) {
            for (Path file : files) {
                try {
                    var state = GantryClient.JSON.readTree(file.toFile());
                    Assignment.Key key = new Assignment.Key(java.util.UUID.fromString(state.path("jobId").asText()),
                            state.path("attempt").asLong(), state.path("task").asText());
                    TaskProcess process = TaskProcess.adopt(state.path("pid").asLong(), state.path("startTicks").asLong(),
                            Path.of(state.path("log").asText()), Path.of(state.path("exitFile").asText()));
                    left.put(key, new Left(key, process, file));
                    log("task %s: left by a previous run (pid %d, %s)", key, process.pid(),
                            process.exit().isDone() ? "ended" : "still running");
                } catch (IOException | RuntimeException e) {
                    log("unreadable task state %s, ignored: %s", file, e.getMessage());
                    Files.deleteIfExists(file);
                }
            }
        } catch (IOException e) {
            log("looking for tasks of a previous run: %s", e.getMessage());
        }
    }

    /** On SIGTERM/SIGINT: the tasks are stopped (their exits not reported: placement hears they were lost when the agent is back). */
    void shutdown() {
        shuttingDown = true;
        heartbeats.shutdownNow();
        logTicks.shutdownNow();
        for (Running r : running.values()) {
            r.reportExit = false;
            try {
                r.process.stop(r.assignment.grace(config.defaultGrace()));
                Files.deleteIfExists(r.stateFile); // stopped on purpose: the next run has nothing to take over
            } catch (InterruptedException | IOException e) {
                // best effort: the next start finds the state file and settles it
            }
        }
        log("stopped");
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, "agent-" + name);
        t.setDaemon(true);
        return t;
    }

    static void log(String format, Object... args) {
        System.err.println(Instant.now() + " " + String.format(format, args));
    }
}
