-- Nodes a node agent manages run their tasks through it (issue 21): the node's source, as the
-- inventory says (AGENT, FILE, KUBERNETES; null from an inventory that did not say).
alter table node add column source text;

-- What the node agents reported of each task of a placed job's current attempt (the binding: the
-- running job's bound_at in milliseconds). One row per task and attempt; the state only moves
-- forward (RUNNING -> EXITED), so a report repeated or delivered late changes nothing.
create table agent_task (
    job_id     uuid        not null,
    attempt    bigint      not null,
    task       text        not null,
    node       text        not null,
    state      text        not null check (state in ('RUNNING', 'EXITED')),
    exit_code  integer,
    log_tail   text,
    started_at timestamptz,
    ended_at   timestamptz,
    updated_at timestamptz not null,
    primary key (job_id, attempt, task)
);
