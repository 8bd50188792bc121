-- The admission check keeps the queue tree and the priority classes in memory (they change rarely and every check
-- read them whole). Whatever changes either table, by any replica or by hand, bumps this one number in the same
-- transaction (statement triggers), and each check reads it in the same statement as the user's counts: a replica
-- whose cached copy is older reloads before it answers.
create table quota_config_version (
    id       integer primary key check (id = 1),
    version  bigint  not null
);
insert into quota_config_version values (1, 0);

create function bump_quota_config_version() returns trigger language plpgsql as $$
begin
    update quota_config_version set version = version + 1 where id = 1;
    return null;
end
$$;

create trigger queue_config_changed after insert or update or delete or truncate on queue
    for each statement execute function bump_quota_config_version();
create trigger priority_class_config_changed after insert or update or delete or truncate on priority_class
    for each statement execute function bump_quota_config_version();

-- the check counts the requesting user's pending jobs
create index pending_job_owner on pending_job (owner, queue);
