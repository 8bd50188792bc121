package dev.gantry.inventory.domain;

/**
 * Where a node's description comes from. A source owns the nodes it registered: the cluster file
 * removes only {@link #FILE} nodes it no longer lists, the heartbeat sweep only ages {@link #AGENT}
 * nodes, and the informer removes only {@link #KUBERNETES} nodes.
 */
public enum NodeSource {
    AGENT, FILE, KUBERNETES
}
