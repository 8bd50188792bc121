package dev.gantry.kit.security;

import io.quarkus.security.ForbiddenException;
import io.quarkus.security.identity.SecurityIdentity;
import org.eclipse.microprofile.jwt.JsonWebToken;

/** What an agent token may touch: its own node, nothing else. */
public final class NodeScope {

    private NodeScope() {
    }

    /**
     * Passes for every caller but an agent, and for an agent whose token names {@code node};
     * otherwise {@link ForbiddenException} (403), before anything is read or changed.
     */
    public static void requireOwnNode(SecurityIdentity identity, String node) {
        if (!identity.hasRole(GantryRoles.AGENT)) {
            return;
        }
        String own = identity.getPrincipal() instanceof JsonWebToken token ? GantryRoles.nodeOf(token).orElse(null) : null;
        if (own == null) {
            throw new ForbiddenException("this agent token names no node (claim " + GantryRoles.NODE_CLAIM + ")");
        }
        if (!own.equals(node)) {
            throw new ForbiddenException("an agent token for node " + own + " may change only that node, not " + node);
        }
    }
}
