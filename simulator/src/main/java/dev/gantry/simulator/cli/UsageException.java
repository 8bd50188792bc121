package dev.gantry.simulator.cli;

/** A bad command line: exit 2 with this one line. */
final class UsageException extends RuntimeException {
    UsageException(String message) {
        super(message);
    }
}
