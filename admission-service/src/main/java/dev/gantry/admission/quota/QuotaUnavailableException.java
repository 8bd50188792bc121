package dev.gantry.admission.quota;

/** quota-service could not answer the admission check in time; nothing was stored. */
public class QuotaUnavailableException extends RuntimeException {
    public QuotaUnavailableException(Throwable cause) {
        super("quota-service did not answer the admission check: " + cause.getMessage(), cause);
    }
}
