-- Conversations. Every workspace row hangs off a thread and goes when the thread goes.
CREATE TABLE threads (
    id          TEXT PRIMARY KEY NOT NULL,
    title       TEXT NOT NULL,
    turn_index  INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX threads_by_update ON threads (updated_at DESC);
