-- Issue 27: every agent write marks its thread active (`updated_at`). With `updated_at` indexed,
-- that update could never be a heap-only (HOT) update: each one wrote a new entry into all three
-- of the table's indexes and left dead ones behind, which the next lookup of the thread by its
-- id had to step over. The thread list reads every row anyway (it returns them all, newest
-- first), so the index bought nothing it could not sort in memory. Without it, and with room
-- left on each page for the new row version, the touch rewrites the row in place.
DROP INDEX IF EXISTS threads_by_update;
ALTER TABLE threads SET (fillfactor = 70);

-- The change log's three tables are written on every change, a row at a time, and a foreign
-- key to `threads` ran a trigger (a query of `threads`) for each row: a fifth of the log
-- statement's time. They keep their integrity without it. Every row is written by the
-- statement that also claims the thread's counter row in `event_seqs`, which keeps its
-- foreign key: for a thread that is gone that claim inserts a counter row, whose check fails
-- and takes the whole statement with it. Deleting a thread removes the counter row first, which
-- waits for any change still logging, and then, in statements of their own that see what that
-- change committed, the three tables' rows (`ThreadRepo::delete_thread`).
ALTER TABLE events DROP CONSTRAINT IF EXISTS events_thread_id_fkey;
ALTER TABLE revisions DROP CONSTRAINT IF EXISTS revisions_thread_id_fkey;
ALTER TABLE panel_changes DROP CONSTRAINT IF EXISTS panel_changes_thread_id_fkey;
