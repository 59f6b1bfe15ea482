-- One document and one objective per thread, keyed on the thread so writes are upserts.
CREATE TABLE documents (
    thread_id   TEXT PRIMARY KEY REFERENCES threads (id) ON DELETE CASCADE,
    title       TEXT NOT NULL DEFAULT '',
    content     TEXT NOT NULL DEFAULT '',
    version     BIGINT NOT NULL DEFAULT 1,
    updated_at  TIMESTAMPTZ NOT NULL
);
-- Large documents are rewritten on every append; storing them uncompressed keeps that cheap.
ALTER TABLE documents ALTER COLUMN content SET STORAGE EXTERNAL;

CREATE TABLE objectives (
    thread_id   TEXT PRIMARY KEY REFERENCES threads (id) ON DELETE CASCADE,
    objective   TEXT NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);
