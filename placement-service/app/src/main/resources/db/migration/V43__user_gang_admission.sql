-- A user's pod gang is admitted by admission-service (placements.gang-formed -> jobs.queued or
-- jobs.refused): its job id is chosen here, at random, and found again by namespace and label, so
-- one label has at most one gang at a time; a refused gang keeps its row (and why) until its pods
-- change or the refusal is old enough to ask again.
alter table cluster_gang add column refused_reason text;
alter table cluster_gang add column refused_at timestamptz;
create unique index cluster_gang_one_user_gang_per_label on cluster_gang (namespace, gang_label) where user_pods;
