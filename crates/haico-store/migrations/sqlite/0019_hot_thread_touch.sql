-- Issue 27: the thread list reads every row anyway (it returns them all, newest first), so an
-- index on `updated_at` bought nothing, while every agent write, which marks its thread active,
-- had to move the thread's entry in it. Dropped here as on PostgreSQL, where it also kept
-- that update from being done in place.
DROP INDEX IF EXISTS threads_by_update;
