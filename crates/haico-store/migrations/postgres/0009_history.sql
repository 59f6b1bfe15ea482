-- History: every committed change of a workspace is a numbered revision, and for each panel it
-- changed either the panel's whole state or the operations from the previous revision's state.
ALTER TABLE event_seqs ADD COLUMN last_rev BIGINT NOT NULL DEFAULT 0;
ALTER TABLE artifacts ADD COLUMN rev BIGINT;
ALTER TABLE threads ADD COLUMN forked_from_thread TEXT;
ALTER TABLE threads ADD COLUMN forked_from_rev BIGINT;

CREATE TABLE revisions (
    thread_id             TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    rev                   BIGINT NOT NULL,
    at                    TIMESTAMPTZ NOT NULL,
    source                TEXT NOT NULL CHECK (source IN ('agent', 'user')),
    by_name               TEXT,
    turn_index            BIGINT,
    thread_turn           BIGINT NOT NULL,
    tool                  TEXT,
    action_and_reasoning  TEXT,
    panels                TEXT NOT NULL,
    summary               TEXT NOT NULL,
    restored_from         BIGINT,
    reverted_turn         BIGINT,
    PRIMARY KEY (thread_id, rev)
);
CREATE INDEX revisions_by_turn ON revisions (thread_id, turn_index) WHERE turn_index IS NOT NULL;

CREATE TABLE panel_changes (
    thread_id    TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    panel        TEXT NOT NULL,
    rev          BIGINT NOT NULL,
    whole        BOOLEAN NOT NULL,
    data         TEXT NOT NULL,
    chain_len    BIGINT NOT NULL,
    chain_bytes  BIGINT NOT NULL,
    base_bytes   BIGINT NOT NULL,
    PRIMARY KEY (thread_id, panel, rev)
);

-- Existing workspaces start their history with one revision holding what they are now.
INSERT INTO revisions (thread_id, rev, at, source, thread_turn, panels, summary)
SELECT t.id, 1, t.updated_at, 'user', t.turn_index,
       '[' || rtrim(
           CASE WHEN EXISTS (SELECT 1 FROM objectives o WHERE o.thread_id = t.id) THEN '"objective",' ELSE '' END ||
           CASE WHEN EXISTS (SELECT 1 FROM documents d WHERE d.thread_id = t.id) THEN '"document",' ELSE '' END ||
           CASE WHEN EXISTS (SELECT 1 FROM todos s WHERE s.thread_id = t.id) THEN '"plan",' ELSE '' END ||
           CASE WHEN EXISTS (SELECT 1 FROM preferences p WHERE p.thread_id = t.id) THEN '"preferences",' ELSE '' END ||
           CASE WHEN EXISTS (SELECT 1 FROM artifacts a WHERE a.thread_id = t.id) THEN '"artifacts",' ELSE '' END,
           ',') || ']',
       'the workspace as it stood when its history began'
FROM threads t
WHERE EXISTS (SELECT 1 FROM objectives o WHERE o.thread_id = t.id)
   OR EXISTS (SELECT 1 FROM documents d WHERE d.thread_id = t.id)
   OR EXISTS (SELECT 1 FROM todos s WHERE s.thread_id = t.id)
   OR EXISTS (SELECT 1 FROM preferences p WHERE p.thread_id = t.id)
   OR EXISTS (SELECT 1 FROM artifacts a WHERE a.thread_id = t.id);

INSERT INTO panel_changes (thread_id, panel, rev, whole, data, chain_len, chain_bytes, base_bytes)
SELECT thread_id, 'objective', 1, TRUE, to_json(objective)::text, 0, 0, length(objective)
FROM objectives;

INSERT INTO panel_changes (thread_id, panel, rev, whole, data, chain_len, chain_bytes, base_bytes)
SELECT thread_id, 'document', 1, TRUE,
       json_build_object('title', title, 'content', content, 'version', version)::text, 0, 0,
       length(content)
FROM documents;

INSERT INTO panel_changes (thread_id, panel, rev, whole, data, chain_len, chain_bytes, base_bytes)
SELECT thread_id, 'plan', 1, TRUE,
       json_agg(json_build_object('id', id, 'text', text, 'depth', depth, 'done', done)
                ORDER BY position)::text, 0, 0, 0
FROM todos GROUP BY thread_id;

INSERT INTO panel_changes (thread_id, panel, rev, whole, data, chain_len, chain_bytes, base_bytes)
SELECT thread_id, 'preferences', 1, TRUE,
       json_agg(json_build_object('id', id, 'title', title, 'subtitle', subtitle, 'kind', kind,
                                  'locked', locked) ORDER BY id)::text, 0, 0, 0
FROM preferences GROUP BY thread_id;

UPDATE artifacts SET rev = 1;

INSERT INTO event_seqs (thread_id, last_seq, last_rev)
SELECT thread_id, 0, 1 FROM revisions
ON CONFLICT (thread_id) DO UPDATE SET last_rev = 1;
