-- The leading replica's last start-time forecast (issue 20), so every placement replica answers
-- GET /v1/start-forecasts, not only the one that computed it. One row, replaced at each recompute
-- (never appended): computed_at is the window the forecast is of (null: none yet), entries the
-- forecast of each waiting job as JSON ({"entries":[{jobId,startAt,basis,waitsFor,note}]}, at most
-- gantry.placement.forecast.max-jobs of them). A reader reports a forecast older than three
-- forecast periods as stale.
create table start_forecast (
    id          smallint    primary key check (id = 1),
    computed_at timestamptz,
    written_at  timestamptz not null,
    max_jobs    integer     not null,
    entries     text        not null
);
