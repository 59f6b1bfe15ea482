-- The plan. `position` is dense (0..n-1 per thread), so a 1-based index the agent sees maps to
-- one indexed row without counting.
CREATE TABLE todos (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id   TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    position    INTEGER NOT NULL,
    text        TEXT NOT NULL,
    depth       INTEGER NOT NULL DEFAULT 0 CHECK (depth >= 0),
    done        BOOLEAN NOT NULL DEFAULT FALSE,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX todos_by_position ON todos (thread_id, position);
