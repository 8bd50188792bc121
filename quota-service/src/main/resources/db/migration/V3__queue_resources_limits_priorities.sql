-- Queues gain CPU and memory guarantees and capabilities, per-GPU-model amounts, members and
-- admission limits; priority classes and per-user limits are new.
alter table queue
    add column guarantee_cpu_millis       bigint  not null default 0 check (guarantee_cpu_millis >= 0),
    add column guarantee_memory_mib       bigint  not null default 0 check (guarantee_memory_mib >= 0),
    add column guarantee_gpus_by_model    text    not null default '{}',
    add column capability_cpu_millis      bigint  check (capability_cpu_millis >= 0),
    add column capability_memory_mib      bigint  check (capability_memory_mib >= 0),
    add column capability_gpus_by_model   text    not null default '{}',
    add column member_users               text    not null default '[]',
    add column member_teams               text    not null default '[]',
    add column max_running_gpus           integer check (max_running_gpus >= 0),
    add column max_gpus_per_job           integer check (max_gpus_per_job >= 0),
    add column max_pending_jobs_per_user  integer check (max_pending_jobs_per_user >= 0);

create table priority_class (
    name               text primary key,
    value              integer     not null,
    preemption_policy  text        not null,
    global_default     boolean     not null,
    description        text,
    updated_at         timestamptz not null
);
-- at most one default class
create unique index priority_class_one_default on priority_class (global_default) where global_default;

create table user_limit (
    user_name          text primary key,
    max_gpus_per_job   integer check (max_gpus_per_job >= 0),
    max_pending_jobs   integer check (max_pending_jobs >= 0),
    updated_at         timestamptz not null
);
