package dev.gantry.admission.security;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.core.MultivaluedHashMap;
import jakarta.ws.rs.core.MultivaluedMap;
import org.eclipse.microprofile.rest.client.ext.ClientHeadersFactory;

/**
 * Puts admission's service token on every call of its REST clients (quota's admission checks and
 * queues, inventory's nodes, placement's allocations). The caller's own token is never forwarded:
 * the console decides what a user may see, the other services only that admission asks.
 */
@ApplicationScoped
public class ServiceTokenHeaders implements ClientHeadersFactory {

    @Inject
    ServiceToken token;

    @Override
    public MultivaluedMap<String, String> update(MultivaluedMap<String, String> incoming, MultivaluedMap<String, String> outgoing) {
        MultivaluedMap<String, String> headers = new MultivaluedHashMap<>();
        headers.putSingle("Authorization", "Bearer " + token.get());
        return headers;
    }
}
