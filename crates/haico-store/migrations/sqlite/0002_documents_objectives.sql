-- One document and one objective per thread, keyed on the thread so writes are upserts.
CREATE TABLE documents (
    thread_id   TEXT PRIMARY KEY NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    title       TEXT NOT NULL DEFAULT '',
    content     TEXT NOT NULL DEFAULT '',
    version     INTEGER NOT NULL DEFAULT 1,
    updated_at  TEXT NOT NULL
);

CREATE TABLE objectives (
    thread_id   TEXT PRIMARY KEY NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    objective   TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
