-- A job that ended (cancelled, completed, failed) leaves a tombstone: a jobs.queued delivered late or
-- again for it never brings back a pending row (which would count against maxPendingJobs for ever).
create table ended_job (
    job_id   uuid        primary key,
    ended_at timestamptz not null
);
