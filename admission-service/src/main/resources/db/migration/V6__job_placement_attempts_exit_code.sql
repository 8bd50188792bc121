-- Where and how a job ran, from placement's reports (applied in placement's order, like the state):
-- attempts: how many times it was bound (each placements.bound applied adds one);
-- placement: the last placement as JSON ({"attempt", "boundAt", "tasks": [{"task", "node", "gpus", "gpuMilli"}]}),
--   held while the job is PLACED or RUNNING and kept as history once it leaves it;
-- exit_code: what its processes exited with, when placement reported it (cleared when it is bound again).
alter table job add column attempts integer not null default 0;
alter table job add column placement text;
alter table job add column exit_code integer;
