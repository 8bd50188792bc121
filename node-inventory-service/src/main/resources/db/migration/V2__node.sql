create table node (
    name            text primary key,
    gpu_model       text,
    gpus            integer     not null check (gpus between 0 and 64),
    schedulable     boolean     not null,
    health          text        not null,
    last_heartbeat  timestamptz,
    description     text        not null,
    updated_at      timestamptz not null
);
