package dev.gantry.quota.domain;

import java.util.List;
import java.util.Locale;

/**
 * Why a job may not enter a queue. Each kind is a type with the facts behind it; {@link #reason()}
 * is the stable code clients switch on, {@link #message()} the sentence for a human.
 */
public sealed interface Rejection {

    String message();

    /** The stable code, e.g. {@code QueueClosed}. */
    default String reason() {
        return getClass().getSimpleName();
    }

    record QueueNotFound(String queue) implements Rejection {
        public String message() {
            return "there is no queue named '" + queue + "'";
        }
    }

    record NotLeafQueue(String queue, List<String> children) implements Rejection {
        public String message() {
            return "jobs go to leaf queues; '" + queue + "' has child queues " + String.join(", ", children);
        }
    }

    record QueueClosed(String queue, String closedQueue) implements Rejection {
        public String message() {
            return queue.equals(closedQueue)
                    ? "queue '" + queue + "' is closed and admits no new jobs"
                    : "queue '" + queue + "' is under '" + closedQueue + "', which is closed and admits no new jobs";
        }
    }

    record NotMember(String user, List<String> teams, String queue, String decidingQueue) implements Rejection {
        public String message() {
            String who = "user '" + user + "'" + (teams.isEmpty() ? "" : " (teams " + String.join(", ", teams) + ")");
            return who + " is not a member of queue '" + decidingQueue + "'"
                    + (decidingQueue.equals(queue) ? "" : ", whose members may submit to '" + queue + "'");
        }
    }

    /** The job asks to be migratable and its queue (or the ancestor deciding) forbids moving running jobs. */
    record MigrationNotAllowed(String queue, String decidingQueue) implements Rejection {
        public String message() {
            return "queue '" + decidingQueue + "' does not allow migratable jobs"
                    + (decidingQueue.equals(queue) ? "" : " (it decides for '" + queue + "')") + "; submit without migratable";
        }
    }

    record UnknownPriorityClass(String priorityClass) implements Rejection {
        public String message() {
            return "there is no priority class named '" + priorityClass + "'";
        }
    }

    /** The class exists but may not be used by this job's teams in this queue. */
    record PriorityClassNotAllowed(String priorityClass, String queue, List<String> allowedQueues, List<String> allowedTeams)
            implements Rejection {
        public String message() {
            String where = allowedQueues.isEmpty() ? "" : " in queues " + String.join(", ", allowedQueues) + " (and below)";
            String who = allowedTeams.isEmpty() ? "" : (where.isEmpty() ? "" : " and") + " by teams " + String.join(", ", allowedTeams);
            return "priority class '" + priorityClass + "' may be used only" + where + who + "; not for this job in queue '" + queue + "'";
        }
    }

    /** The job asks for a higher priority than its queue lets it ({@code source} names the limit). */
    record PriorityAboveLimit(int priority, int limit, String source) implements Rejection {
        public String message() {
            return String.format(Locale.ROOT, "the job asks for priority %d; %s allows at most %d", priority, source, limit);
        }
    }

    /** The job alone asks for more than a per-job limit allows ({@code source} names the limit). */
    record ExceedsJobLimit(int requestedGpus, int maxGpusPerJob, String source) implements Rejection {
        public String message() {
            return String.format(Locale.ROOT, "the job asks for %d GPUs; %s allows at most %d GPUs per job",
                    requestedGpus, source, maxGpusPerJob);
        }
    }

    /** The job alone is larger than what the queue (or an ancestor) may ever hold, so it could never run. */
    record ExceedsQueueCapability(String queue, String resource, long requested, long capability) implements Rejection {
        public String message() {
            return String.format(Locale.ROOT, "the job asks for %d %s but queue '%s' may hold at most %d, so it could never run",
                    requested, resource, queue, capability);
        }
    }

    /** The team's queue would run more GPUs than its limit with this job. */
    record ExceedsTeamLimit(String queue, long runningGpus, int requestedGpus, int maxRunningGpus) implements Rejection {
        public String message() {
            return String.format(Locale.ROOT,
                    "queue '%s' runs %d GPUs and may run at most %d; the job's %d GPUs would exceed that. Submit again when jobs finish",
                    queue, runningGpus, maxRunningGpus, requestedGpus);
        }
    }

    record TooManyPendingJobs(String user, long pendingJobs, int maxPendingJobs, String source) implements Rejection {
        public String message() {
            return String.format(Locale.ROOT, "user '%s' already has %d pending jobs; %s allows at most %d",
                    user, pendingJobs, source, maxPendingJobs);
        }
    }
}
