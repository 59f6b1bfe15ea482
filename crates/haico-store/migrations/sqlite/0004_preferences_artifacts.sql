-- The user's constraints, in the order they were recorded.
CREATE TABLE preferences (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id   TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    title       TEXT NOT NULL,
    subtitle    TEXT,
    kind        TEXT NOT NULL CHECK (kind IN ('hard', 'soft')),
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX preferences_by_thread ON preferences (thread_id, id);

-- Typed outputs (charts), tagged with the turn that made them; payload is JSON text.
CREATE TABLE artifacts (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id      TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    artifact_type  TEXT NOT NULL,
    title          TEXT,
    payload        TEXT NOT NULL,
    turn_index     INTEGER NOT NULL,
    created_at     TEXT NOT NULL
);
CREATE INDEX artifacts_by_thread ON artifacts (thread_id, id);
