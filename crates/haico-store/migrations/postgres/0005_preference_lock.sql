-- A locked preference can be changed or removed by the user only; the agent path's writes carry
-- `locked = FALSE` in their WHERE clause. Existing rows start unlocked.
ALTER TABLE preferences ADD COLUMN locked BOOLEAN NOT NULL DEFAULT FALSE;
