-- A place among a user's pending jobs, taken by an admission check that allowed a job, until the job's
-- jobs.queued arrives (it becomes a pending_job row) or the reservation expires (admission never stored
-- the job). Without it two concurrent checks of one user both passed maxPendingJobs (issue 18).
create table admission_reservation (
    job_id       uuid primary key,
    owner        text        not null,
    queue        text        not null,
    reserved_at  timestamptz not null
);
create index admission_reservation_owner on admission_reservation (owner);
create index admission_reservation_age on admission_reservation (reserved_at);
