-- What fair share works from, learned from events: jobs waiting (jobs.*), jobs holding
-- resources (placements.*), the cluster's capacity (nodes.*), and each queue's decayed usage.
create table pending_job (
    job_id       uuid primary key,
    queue        text        not null,
    owner        text,
    gpus         integer     not null,
    cpu_millis   bigint      not null,
    memory_mib   bigint      not null,
    queued_at    timestamptz not null
);
create index pending_job_queue on pending_job (queue);

create table allocation (
    job_id       uuid primary key,
    queue        text        not null,
    owner        text,
    gpus         integer     not null,
    gpu_model    text,
    cpu_millis   bigint      not null,
    memory_mib   bigint      not null,
    bound_at     timestamptz not null
);
create index allocation_queue on allocation (queue);

-- a job released before its bound event arrived (events of two streams may cross)
create table released_job (
    job_id       uuid primary key,
    released_at  timestamptz not null
);

create table node_capacity (
    name         text primary key,
    gpu_model    text,
    gpus         integer     not null,
    cpu_millis   bigint      not null,
    memory_mib   bigint      not null,
    ready        boolean     not null,
    updated_at   timestamptz not null
);

create table queue_usage (
    queue        text primary key,
    usage_hours  double precision not null,
    updated_at   timestamptz      not null
);

-- the last quota.shares published (one row), to publish again only on change or period
create table shares_publication (
    id            integer primary key check (id = 1),
    fingerprint   text        not null,
    published_at  timestamptz not null
);
