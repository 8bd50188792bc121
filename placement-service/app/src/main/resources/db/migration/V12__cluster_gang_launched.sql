-- Kubernetes binder mode: when all pods of the current placement attempt were created and bound.
-- A placement is recorded before its pods exist; one still null after a restart (the service died
-- in between) is launched again by the leader. Rows from before this column came from a binder that
-- launched right after recording, so they count as launched (their lost pods are caught as missing).
alter table cluster_gang add column launched_at timestamptz;
update cluster_gang set launched_at = created_at;
