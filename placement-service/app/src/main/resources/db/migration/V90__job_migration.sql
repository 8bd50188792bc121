-- Defragmentation that happens (issue 23). A migration is recorded before it is acted on: the
-- running job is told to stop (evicting_until, as a checkpointable victim is), and the GPUs it moves
-- to are held in migration_targets until the move is finished (or abandoned) by the sweep, so no
-- other job is placed on them; last_migrated_at spaces two moves of one job.
alter table running_job add column migration_targets text;
alter table running_job add column last_migrated_at timestamptz;

-- Every move, in flight (finished_at null) or done: the disruption budget counts them per hour.
create table job_migration (
    id           bigserial   primary key,
    job_id       uuid        not null,
    queue        text        not null,
    from_nodes   text        not null,
    to_nodes     text        not null,
    started_at   timestamptz not null,
    finished_at  timestamptz,
    outcome      text
);
create index job_migration_by_start on job_migration (started_at);
-- one move of a job at a time
create unique index job_migration_in_flight on job_migration (job_id) where finished_at is null;
