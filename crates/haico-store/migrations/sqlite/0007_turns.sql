-- Agent turns, the conversation, and every tool step, so a thread can be reloaded and studied.
CREATE TABLE turns (
    thread_id    TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    turn_index   INTEGER NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'cancelled')),
    error        TEXT,
    started_at   TEXT NOT NULL,
    finished_at  TEXT,
    PRIMARY KEY (thread_id, turn_index)
);
-- At most one running turn per thread, whichever process runs it.
CREATE UNIQUE INDEX turns_one_running ON turns (thread_id) WHERE status = 'running';

CREATE TABLE messages (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id   TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    turn_index  INTEGER NOT NULL,
    role        TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content     TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE INDEX messages_by_thread ON messages (thread_id, id);

CREATE TABLE steps (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id             TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    turn_index            INTEGER NOT NULL,
    step_index            INTEGER NOT NULL,
    tool                  TEXT NOT NULL,
    arguments             TEXT NOT NULL,
    action_and_reasoning  TEXT,
    result                TEXT NOT NULL,
    success               BOOLEAN NOT NULL,
    duration_ms           REAL NOT NULL,
    created_at            TEXT NOT NULL
);
CREATE INDEX steps_by_turn ON steps (thread_id, turn_index, step_index);
