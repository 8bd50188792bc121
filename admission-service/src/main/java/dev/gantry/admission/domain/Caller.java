package dev.gantry.admission.domain;

import java.util.Set;

/**
 * Who is asking: a user, the teams they belong to, and whether they administer the cluster.
 * Users see and cancel their teams' jobs; admins see all.
 */
public record Caller(String user, Set<String> teams, boolean admin) {

    public Caller {
        teams = Set.copyOf(teams);
    }

    public boolean canSee(String team) {
        return admin || teams.contains(team);
    }
}
