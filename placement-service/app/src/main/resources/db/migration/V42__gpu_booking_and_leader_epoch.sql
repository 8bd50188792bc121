-- Exclusivity by construction: every allocation books its GPUs in gpu_booking, one row per (node, GPU)
-- holding the thousandths of that GPU in use (1000 for a whole GPU, gpu_milli for a shared one). The
-- check makes a second whole booking of a GPU, or shares over one GPU, fail in the database, whatever
-- code path or process wrote the allocation; the row lock makes concurrent bookings wait for each other.
create table gpu_booking (
    node        text    not null,
    gpu         integer not null,
    used_milli  integer not null,
    primary key (node, gpu),
    constraint gpu_booked_at_most_once check (used_milli between 0 and 1000)
);

create function book_allocation_gpus() returns trigger language plpgsql as $$
declare
    g integer;
begin
    -- the old booking goes first, so an update in place never counts a GPU twice
    if tg_op in ('DELETE', 'UPDATE') then
        foreach g in array old.gpu_indices loop
            update gpu_booking set used_milli = used_milli - coalesce(old.gpu_milli, 1000)
             where node = old.node and gpu = g;
        end loop;
    end if;
    if tg_op in ('INSERT', 'UPDATE') then
        foreach g in array new.gpu_indices loop
            insert into gpu_booking (node, gpu, used_milli) values (new.node, g, coalesce(new.gpu_milli, 1000))
            on conflict (node, gpu) do update set used_milli = gpu_booking.used_milli + excluded.used_milli;
        end loop;
    end if;
    return null;
end $$;

create trigger allocation_books_gpus after insert or update or delete on allocation
    for each row execute function book_allocation_gpus();

-- what is held now (capped, so a database that already holds a double booking still starts; the next
-- booking of such a GPU is then refused)
insert into gpu_booking (node, gpu, used_milli)
select node, gpu, least(sum(coalesce(gpu_milli, 1000)), 1000)
  from allocation, unnest(gpu_indices) as gpu
 group by node, gpu;

-- The fencing token: the leadership epoch. A process that starts to lead takes the next epoch; every
-- bind and preemption transaction locks this row and checks that the epoch is still its own, so a
-- deposed leader's late writes fail instead of landing beside the new leader's.
create table placement_leader (
    id           integer     primary key check (id = 1),
    epoch        bigint      not null,
    holder       text,
    acquired_at  timestamptz
);
insert into placement_leader (id, epoch) values (1, 0);
