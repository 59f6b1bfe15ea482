-- The thread's event log: every announced change, written in the transaction that made it,
-- numbered per thread so a reconnecting client can ask for what it missed.
CREATE TABLE event_seqs (
    thread_id  TEXT PRIMARY KEY NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    last_seq   INTEGER NOT NULL
);

CREATE TABLE events (
    thread_id   TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    event       TEXT NOT NULL,
    data        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (thread_id, seq)
);
