-- MCP sessions over streamable HTTP, shared by every replica: a session opened on one server
-- keeps working when its next request lands on another, which replays the handshake from the
-- stored `initialize` parameters. `state` is rmcp's `SessionState` as JSON; a session unused
-- for longer than a day is forgotten. The URIs a session subscribed to with
-- `resources/subscribe` are shared too, so the replica holding its notification stream
-- announces what was subscribed on another.
CREATE TABLE mcp_sessions (
    id            TEXT PRIMARY KEY NOT NULL,
    thread_id     TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    state         TEXT NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    last_used_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX mcp_sessions_by_last_use ON mcp_sessions (last_used_at);
CREATE INDEX mcp_sessions_by_thread ON mcp_sessions (thread_id);

CREATE TABLE mcp_subscriptions (
    session_id  TEXT NOT NULL REFERENCES mcp_sessions (id) ON DELETE CASCADE,
    uri         TEXT NOT NULL,
    PRIMARY KEY (session_id, uri)
);
