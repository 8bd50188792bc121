-- Graceful, accounted preemption. A checkpointable victim is told first and keeps its GPUs until
-- evicting_until (its grace period), then returns to pending; a job placed again after a
-- preemption is not preemptible until protected_until (no thrashing).
alter table running_job add column evicting_until timestamptz;
alter table running_job add column evict_reason text;
alter table running_job add column protected_until timestamptz;
create index running_job_by_evicting on running_job (evicting_until) where evicting_until is not null;

-- When a job was last preempted and how often: outlives its trip through pending_job.
create table job_preemption (
    job_id             uuid primary key,
    last_preempted_at  timestamptz not null,
    times              integer     not null
);
