create table queue (
    name             text primary key,
    parent           text references queue (name),
    weight           integer     not null check (weight > 0),
    guarantee_gpus   integer     not null check (guarantee_gpus >= 0),
    capability_gpus  integer     check (capability_gpus >= 0),
    reclaimable      boolean     not null,
    state            text        not null,
    updated_at       timestamptz not null
);
