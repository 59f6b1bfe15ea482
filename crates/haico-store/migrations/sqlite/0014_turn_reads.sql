-- Each document keeps its body's length in characters, written with the body: counting a
-- 1 MB body in SQL costs about a millisecond, and every append's answer and every prompt's
-- excerpt needs the length.
ALTER TABLE documents ADD COLUMN chars INTEGER NOT NULL DEFAULT 0;
UPDATE documents SET chars = length(content);

-- The prompt asks on every model call for the restores and undos since the agent's last
-- turn; without this index that read walks every revision of the thread.
CREATE INDEX revisions_rewrites ON revisions (thread_id, thread_turn)
    WHERE restored_from IS NOT NULL OR reverted_turn IS NOT NULL;
