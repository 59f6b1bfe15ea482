-- Issue 26: calls of other MCP servers waiting for a person's approval, shared by every process
-- on the database, so the list and a decision reach the turn whichever replica runs it. A row
-- lives while its turn waits (the turn deletes it when the wait ends); `decision` is NULL until
-- an editor decides (1 approve, 0 decline). A row whose turn no longer runs is not waiting.
CREATE TABLE pending_approvals (
    thread_id   TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    call_id     TEXT NOT NULL,
    turn_index  INTEGER NOT NULL,
    request     TEXT NOT NULL,
    decision    INTEGER,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (thread_id, call_id)
);
