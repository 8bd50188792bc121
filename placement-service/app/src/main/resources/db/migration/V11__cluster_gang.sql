-- Kubernetes binder mode: where a job's pods live. API jobs get pods gantry creates
-- (user_pods = false, gang_label = the job id); pods users create with schedulerName gantry and
-- gantry.dev/job form a gang (user_pods = true, gang_label = their gantry.dev/job) whose pods are
-- listed per task (pods: {"task": "pod name"}), so binding uses the pods that exist. attempt
-- counts placements: a new attempt's pods never collide with an evicted one's still terminating.
create table cluster_gang (
    job_id      uuid primary key,
    namespace   text    not null,
    gang_label  text    not null,
    user_pods   boolean not null,
    pods        text    not null default '{}',
    attempt     integer not null default 1,
    created_at  timestamptz not null
);
