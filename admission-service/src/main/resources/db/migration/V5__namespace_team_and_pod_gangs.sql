-- Kubernetes namespaces whose users' pod gangs Gantry admits, and the team each is charged to (set by an admin).
create table namespace_team (
    namespace   text primary key,
    team        text not null,
    updated_by  text not null,
    updated_at  timestamptz not null
);

-- A pod gang withdrawn (placements.gang-dissolved) before its placements.gang-formed was applied: a
-- late gang-formed must not admit a gang whose pods are gone.
create table dissolved_pod_gang (
    job_id        uuid primary key,
    dissolved_at  timestamptz not null
);
