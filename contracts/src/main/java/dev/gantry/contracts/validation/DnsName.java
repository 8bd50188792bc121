package dev.gantry.contracts.validation;

import java.util.List;
import java.util.regex.Pattern;

/**
 * Names of nodes, queues, jobs and task groups are Kubernetes DNS subdomain names, so that they
 * can be used as they are in pod names, labels and NATS subjects.
 */
public final class DnsName {

    private static final Pattern PATTERN = Pattern.compile("[a-z0-9]([-a-z0-9.]*[a-z0-9])?");
    public static final int MAX_LENGTH = 253;
    public static final String RULE = "must be a lowercase DNS subdomain name ([a-z0-9]([-a-z0-9.]*[a-z0-9])?, at most 253 characters)";

    private DnsName() {
    }

    public static boolean isValid(String value) {
        return value != null && value.length() <= MAX_LENGTH && PATTERN.matcher(value).matches();
    }

    /** Adds a violation for {@code field} to {@code violations} when {@code value} is not a valid name. */
    public static void check(List<FieldViolation> violations, String field, String value) {
        if (!isValid(value)) {
            violations.add(new FieldViolation(field, RULE));
        }
    }
}
