-- A job that ended here (cancelled, completed, failed) leaves a tombstone, so a jobs.queued
-- redelivered or delivered late (after its jobs.cancelled) never brings it back to the pending set.
create table ended_job (
    job_id   uuid        primary key,
    ended_at timestamptz not null,
    how      text        not null
);
