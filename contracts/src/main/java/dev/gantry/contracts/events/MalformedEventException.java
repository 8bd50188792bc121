package dev.gantry.contracts.events;

/** An event that cannot be read: consumers log it, count it and acknowledge it (retrying cannot help). */
public class MalformedEventException extends RuntimeException {
    public MalformedEventException(String message) {
        super(message);
    }

    public MalformedEventException(String message, Throwable cause) {
        super(message, cause);
    }
}
