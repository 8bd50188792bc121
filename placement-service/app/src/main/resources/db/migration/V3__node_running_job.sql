-- Nodes as learned from nodes.upserted / nodes.removed. A removed node stays as a tombstone
-- (removed = true) so a late, older upsert cannot bring it back; snapshot_version orders events.
create table node (
    name              text primary key,
    info              text        not null,
    snapshot_version  bigint      not null,
    removed           boolean     not null default false,
    updated_at        timestamptz not null
);

-- A placed job: its jobs.queued payload (to requeue it on preemption with its original
-- submission time) and, in standalone mode, when the built-in executor completes it.
create table running_job (
    job_id        uuid primary key,
    queue         text        not null,
    priority      integer     not null,
    spec          text        not null,
    submitted_at  timestamptz not null,
    bound_at      timestamptz not null,
    due_at        timestamptz not null
);
create index running_job_by_due on running_job (due_at);

-- CPU and memory each task holds, so the next window's scenario counts them against the node.
alter table allocation add column cpu_millis bigint not null default 0;
alter table allocation add column memory_mib bigint not null default 0;
