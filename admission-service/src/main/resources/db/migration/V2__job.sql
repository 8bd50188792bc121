create table job (
    id              uuid primary key,
    name            text        not null,
    queue           text        not null,
    owner           text        not null,
    priority        integer     not null,
    total_gpus      integer     not null,
    state           text        not null,
    pending_reason  text,
    spec            text        not null,
    submitted_at    timestamptz not null,
    updated_at      timestamptz not null,
    version         bigint      not null default 0
);
create index job_by_queue_state on job (queue, state);
