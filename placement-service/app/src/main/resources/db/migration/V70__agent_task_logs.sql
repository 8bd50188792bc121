-- Task output shipped by the node agents (issue 21). One stream per task of an attempt: the node
-- whose agent ships it (only that agent may add to it), log_end where the next chunk must start (the
-- bytes of the log shipped so far) and log_dropped how many of the first bytes were let go to keep
-- the task under gantry.placement.agent.log-max-bytes. Kept after the job ends (agent_task is not),
-- until gantry.placement.agent.log-retention after its last chunk.
create table agent_log_stream (
    job_id      uuid        not null,
    attempt     bigint      not null,
    task        text        not null,
    node        text        not null,
    log_end     bigint      not null,
    log_dropped bigint      not null,
    updated_at  timestamptz not null,
    primary key (job_id, attempt, task)
);
create index agent_log_stream_updated on agent_log_stream (updated_at);

-- Bytes [start_offset, end_offset) of one stream, as the agent sent them.
create table agent_log_chunk (
    job_id       uuid   not null,
    attempt      bigint not null,
    task         text   not null,
    start_offset bigint not null,
    end_offset   bigint not null,
    data         bytea  not null,
    primary key (job_id, attempt, task, start_offset)
);
