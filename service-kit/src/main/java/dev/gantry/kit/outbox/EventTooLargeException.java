package dev.gantry.kit.outbox;

/**
 * An event larger than the broker accepts: it could never be published, so the change that would
 * write it is refused instead of being stored (a request that causes it is answered 413).
 */
public class EventTooLargeException extends RuntimeException {

    private final String subject;
    private final long bytes;
    private final long limit;

    public EventTooLargeException(String subject, long bytes, long limit) {
        super("its " + subject + " event would be " + bytes + " bytes, over the broker's limit of " + limit + " bytes");
        this.subject = subject;
        this.bytes = bytes;
        this.limit = limit;
    }

    public String subject() {
        return subject;
    }

    public long bytes() {
        return bytes;
    }

    public long limit() {
        return limit;
    }
}
