-- How long jobs that completed here ran: the history that estimates the runtime of a job that gives
-- none, for the window's reservations (RuntimeHistory). One row per key: 'job|queue|owner|name' and
-- 'shape|queue|replicas x gpus,...'; the latest runtimes first, at most 20 (a small table).
create table job_runtime (
    key              text        primary key,
    runtimes_millis  bigint[]    not null,
    updated_at       timestamptz not null
);
