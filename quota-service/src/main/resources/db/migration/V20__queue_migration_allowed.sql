-- A queue may forbid migratable jobs (issue 23): false refuses them at admission; null defers to the
-- nearest ancestor that says; none says: allowed.
alter table queue add column migration_allowed boolean;
