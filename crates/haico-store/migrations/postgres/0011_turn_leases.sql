-- Turns across replicas: the replica that runs a turn owns it and renews a lease while it
-- runs; a turn whose lease ran out (its replica died or hangs) is ended by any other replica.
-- A cancel requested on another replica is recorded here too, so it reaches the owner even if
-- its doorbell is lost.
ALTER TABLE turns ADD COLUMN owner TEXT;
ALTER TABLE turns ADD COLUMN lease_until_ms BIGINT;
ALTER TABLE turns ADD COLUMN cancel_requested BOOLEAN NOT NULL DEFAULT FALSE;
-- Turns running when this migration runs belong to a process without leases: nobody renews
-- them, so the first replica that looks ends them (what start-up used to do).
UPDATE turns SET lease_until_ms = 0 WHERE status = 'running';
