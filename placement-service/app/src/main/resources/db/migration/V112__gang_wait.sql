-- Scheduled consolidation (issue 23, item 4) makes room for the gang shapes that waited longest. A job
-- whose pods ask for 2 or more whole GPUs leaves a row when it is bound: its shape (task groups, GPU
-- models, topology, network), how long it waited from submission, and its spec (the shape's example:
-- selector, tolerations, CPU and memory). Rows older than the pass's lookback are deleted by the pass.
create table gang_wait (
    job_id     uuid        primary key,
    shape      text        not null,
    waited_ms  bigint      not null,
    bound_at   timestamptz not null,
    spec       text        not null
);
create index gang_wait_by_bound on gang_wait (bound_at);
