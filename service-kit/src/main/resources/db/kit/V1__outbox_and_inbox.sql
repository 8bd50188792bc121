-- Shared by every Gantry service (gantry-service-kit); service migrations start at V2.
create table outbox_event (
    id            bigint generated always as identity primary key,
    event_id      uuid        not null unique,
    subject       text        not null,
    subject_id    text        not null,
    envelope      text        not null,
    created_at    timestamptz not null,
    published_at  timestamptz,
    attempts      integer     not null default 0,
    last_error    text
);
-- the relay reads only what is not published yet, in order
create index outbox_event_pending on outbox_event (id) where published_at is null;

create table processed_event (
    event_id      uuid        primary key,
    type          text        not null,
    processed_at  timestamptz not null
);
