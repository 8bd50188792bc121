-- MIG devices (issue 22): a task of a MIG task group holds MIG devices of its profile, by id (the MIG UUID where
-- the inventory knows it), and no GPU index. The profile is kept with the allocation so a running job's MIG
-- devices count toward its queue without its spec.
alter table allocation add column mig_profile text;
alter table allocation add column mig_devices text[] not null default '{}';

-- Exclusivity by construction, as gpu_booking does for GPUs: every MIG device an allocation holds is a row here,
-- and the primary key makes a second booking of one device fail in the database, whatever wrote the allocation.
create table mig_booking (
    node    text not null,
    device  text not null,
    primary key (node, device)
);

create function book_allocation_mig_devices() returns trigger language plpgsql as $$
begin
    if tg_op in ('DELETE', 'UPDATE') and cardinality(old.mig_devices) > 0 then
        delete from mig_booking where node = old.node and device = any (old.mig_devices);
    end if;
    if tg_op in ('INSERT', 'UPDATE') and cardinality(new.mig_devices) > 0 then
        insert into mig_booking (node, device) select new.node, unnest(new.mig_devices);
    end if;
    return null;
end $$;

create trigger allocation_books_mig_devices after insert or update or delete on allocation
    for each row execute function book_allocation_mig_devices();
