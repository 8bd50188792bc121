-- The key placement signs the pods it makes with (kubernetes mode): a pod whose annotation does not
-- carry the right signature was not made by Gantry, whatever its name and labels say. Made once, by
-- the first replica that needs it; every replica reads the same one.
create table placement_secret (
    name   text primary key,
    value  bytea not null
);
