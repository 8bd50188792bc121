-- who describes each node (AGENT, FILE, KUBERNETES), the inventory's own cordon, and the leaf for filtering
alter table node add column source text not null default 'AGENT';
alter table node add column cordoned boolean not null default false;
alter table node add column leaf text;
create index node_leaf on node (leaf);
create index node_gpu_model on node (gpu_model);

-- the snapshot version: one row, bumped in the transaction of every change, so it never goes backwards
create table inventory_version (
    id       integer primary key check (id = 1),
    version  bigint  not null check (version >= 0)
);
insert into inventory_version (id, version) values (1, 0);
