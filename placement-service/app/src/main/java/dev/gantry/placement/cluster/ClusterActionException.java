package dev.gantry.placement.cluster;

/**
 * The cluster refused or failed an action after retries; whatever was half done has been undone.
 * {@code permanent}: retrying cannot help (e.g. a task group without an image), so the job fails
 * instead of waiting for another window.
 */
public class ClusterActionException extends RuntimeException {

    private final boolean permanent;

    public ClusterActionException(String message, boolean permanent, Throwable cause) {
        super(message, cause);
        this.permanent = permanent;
    }

    public boolean permanent() {
        return permanent;
    }
}
