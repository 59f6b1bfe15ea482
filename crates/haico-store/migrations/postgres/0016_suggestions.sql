-- Suggestions (issue 25): a thread's document mode, and the agent's proposed document changes
-- that a person accepts or rejects. A suggestion is a record: it is never deleted (except with
-- its thread), only decided. Ids count per thread from 1, so the agent can say "#3".
ALTER TABLE threads ADD COLUMN document_mode TEXT NOT NULL DEFAULT 'direct';

CREATE TABLE suggestions (
    thread_id            TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    id                   BIGINT NOT NULL,
    status               TEXT NOT NULL DEFAULT 'open',
    kind                 TEXT NOT NULL,
    turn_index           BIGINT NOT NULL,
    by_name              TEXT,
    action_and_reasoning TEXT,
    base_version         BIGINT NOT NULL,
    title                TEXT,
    edits                TEXT NOT NULL,
    created_at           TIMESTAMPTZ NOT NULL,
    decided_at           TIMESTAMPTZ,
    decided_by           TEXT,
    diff                 TEXT,
    PRIMARY KEY (thread_id, id)
);
CREATE INDEX suggestions_by_status ON suggestions (thread_id, status, id);
