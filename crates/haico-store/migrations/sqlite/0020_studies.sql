-- Issue 42: studies. A study is a frozen design (JSON, validated by the server before it is
-- stored) with an entry key for its link and a secret for pseudonyms that never leaves the
-- server. Conditions are rows of their own so that assignment can count and compare them in
-- SQL. A session is one participant's run: the participant id is kept (the owner's raw export
-- needs it) beside its keyed hash (`participant_key`), which is what resuming looks up, so
-- the same person never gets two sessions of one study. The participant's token is kept as
-- its digest, like personal tokens.
CREATE TABLE studies (
    id          TEXT PRIMARY KEY NOT NULL,
    owner_id    INTEGER REFERENCES users (id) ON DELETE SET NULL,
    title       TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('draft', 'open', 'closed')),
    entry_key   TEXT NOT NULL UNIQUE,
    secret      TEXT NOT NULL,
    design      TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

CREATE TABLE study_conditions (
    study_id    TEXT NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    condition_key TEXT NOT NULL,
    ordinal     INTEGER NOT NULL,
    weight      REAL NOT NULL,
    target      INTEGER,
    recruiting  INTEGER NOT NULL,
    PRIMARY KEY (study_id, condition_key)
);

CREATE TABLE study_sessions (
    session_ref      TEXT PRIMARY KEY NOT NULL,
    study_id         TEXT NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    participant_key  TEXT,
    participant_id   TEXT,
    params           TEXT NOT NULL,
    token_digest     TEXT NOT NULL UNIQUE,
    status           TEXT NOT NULL,
    condition_key    TEXT,
    thread_id        TEXT REFERENCES threads (id) ON DELETE SET NULL,
    preview          INTEGER NOT NULL DEFAULT 0,
    entered_at       TEXT NOT NULL,
    consented_at     TEXT,
    started_at       TEXT,
    deadline         TEXT,
    warned_at        TEXT,
    ended_at         TEXT,
    UNIQUE (study_id, participant_key)
);
CREATE INDEX study_sessions_by_study ON study_sessions (study_id, condition_key, status);
CREATE INDEX study_sessions_by_thread ON study_sessions (thread_id);
CREATE INDEX study_sessions_by_deadline ON study_sessions (deadline) WHERE status = 'active';
