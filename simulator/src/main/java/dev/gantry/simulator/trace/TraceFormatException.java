package dev.gantry.simulator.trace;

/** A trace file that cannot be read: the message names the file, line and column. */
public final class TraceFormatException extends RuntimeException {
    public TraceFormatException(String message) {
        super(message);
    }
}
