-- Turns across processes: the process that runs a turn owns it and renews a lease while it
-- runs; a turn whose lease ran out (its process died or hangs) is ended by any other one.
-- A cancel requested by another process is recorded here too.
ALTER TABLE turns ADD COLUMN owner TEXT;
ALTER TABLE turns ADD COLUMN lease_until_ms INTEGER;
ALTER TABLE turns ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0;
-- Turns running when this migration runs belong to a process without leases: nobody renews
-- them, so the first process that looks ends them (what start-up used to do).
UPDATE turns SET lease_until_ms = 0 WHERE status = 'running';
