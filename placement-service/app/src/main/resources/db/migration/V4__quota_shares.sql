-- The latest quota.shares (one row): the queue tree, guarantees and capabilities the window plans with.
create table quota_shares (
    id           integer primary key check (id = 1),
    shares       text        not null,
    computed_at  timestamptz not null,
    updated_at   timestamptz not null
);
