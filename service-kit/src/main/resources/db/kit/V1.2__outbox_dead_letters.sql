-- A row that could not be published after gantry.outbox.max-attempts tries is set aside (a dead letter):
-- the relay goes on with the others, an alert fires, an admin lists and retries it.
alter table outbox_event add column dead_lettered_at timestamptz;
drop index if exists outbox_event_pending;
create index outbox_event_pending on outbox_event (id) where published_at is null and dead_lettered_at is null;
create index outbox_event_dead on outbox_event (id) where dead_lettered_at is not null and published_at is null;
