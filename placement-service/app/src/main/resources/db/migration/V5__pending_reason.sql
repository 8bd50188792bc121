-- what the last window said of a waiting job; placements.pending goes out only when it changes
alter table pending_job add column reason text;
alter table pending_job add column reason_at timestamptz;
