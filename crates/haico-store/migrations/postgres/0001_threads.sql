-- Conversations. Every workspace row hangs off a thread and goes when the thread goes.
CREATE TABLE threads (
    id          TEXT PRIMARY KEY,
    title       TEXT NOT NULL,
    turn_index  BIGINT NOT NULL DEFAULT 0,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX threads_by_update ON threads (updated_at DESC);
