-- The sequence of the last placement report applied to the job (placement's outbox order): an older
-- report, delivered late, changes nothing.
alter table job add column placement_sequence bigint not null default 0;

-- What happened to a job, in order: submitted, placed, preempted or requeued and why, ended.
create table job_history (
    id        bigserial   primary key,
    job_id    uuid        not null references job (id),
    at        timestamptz not null,
    state     text        not null,
    reason    text,
    source    text        not null
);
create index job_history_by_job on job_history (job_id, id);
