-- Priority is governed, not chosen: a queue gives jobs that name no priority its default, and caps
-- what a job may ask for; a priority class may be limited to some queues (and their subtrees) or teams.
alter table queue add column default_priority integer;
alter table queue add column max_priority integer;
alter table priority_class add column allowed_queues text;
alter table priority_class add column allowed_teams text;
