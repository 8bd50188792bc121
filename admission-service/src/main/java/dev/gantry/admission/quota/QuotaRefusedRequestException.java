package dev.gantry.admission.quota;

/**
 * quota-service answered 4xx: it is up and found the request wrong. Not a sign that it is down, so
 * it is neither retried nor counted by the circuit breaker; the submitter gets the reason.
 */
public class QuotaRefusedRequestException extends RuntimeException {

    private final int status;

    public QuotaRefusedRequestException(int status, String body) {
        super("quota-service refused the check (" + status + "): " + body);
        this.status = status;
    }

    public int status() {
        return status;
    }
}
