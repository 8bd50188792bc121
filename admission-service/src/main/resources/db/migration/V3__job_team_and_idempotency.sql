alter table job add column team text not null default 'default';
alter table job add column priority_class text;
create index job_by_team on job (team, submitted_at desc, id);
create index job_by_submission on job (submitted_at desc, id);

-- a retried submission with the same key returns the first job, never a second one
create table idempotency_key (
    owner         text        not null,
    key           text        not null,
    request_hash  text        not null,
    job_id        uuid        not null references job (id),
    created_at    timestamptz not null,
    primary key (owner, key)
);
