-- The thread's event log: every announced change, written in the transaction that made it,
-- numbered per thread so a reconnecting client can ask for what it missed. The counter lives
-- in its own table so that appending an event never waits on the thread row, which agent
-- calls hold locked for their whole transaction.
CREATE TABLE event_seqs (
    thread_id  TEXT PRIMARY KEY REFERENCES threads (id) ON DELETE CASCADE,
    last_seq   BIGINT NOT NULL
);

CREATE TABLE events (
    thread_id   TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    seq         BIGINT NOT NULL,
    event       TEXT NOT NULL,
    data        TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (thread_id, seq)
);
