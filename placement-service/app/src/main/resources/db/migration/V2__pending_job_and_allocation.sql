create table pending_job (
    job_id        uuid primary key,
    name          text        not null,
    queue         text        not null,
    priority      integer     not null,
    total_gpus    integer     not null,
    spec          text        not null,
    submitted_at  timestamptz not null,
    received_at   timestamptz not null
);

create table allocation (
    id            bigint generated always as identity primary key,
    job_id        uuid        not null,
    task          text        not null,
    node          text        not null,
    gpu_indices   integer[]   not null,
    gpu_milli     integer,
    allocated_at  timestamptz not null,
    unique (job_id, task)
);
create index allocation_by_node on allocation (node);
