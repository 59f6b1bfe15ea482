-- People: accounts (a password as its Argon2id hash, a personal token as its SHA-256 digest),
-- sign-in sessions (the key's digest), who owns each thread and whom it is shared with, and
-- who wrote each message. Threads made before accounts have no owner until the first
-- administrator is created, who then owns them.
CREATE TABLE users (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    name           TEXT NOT NULL UNIQUE,
    role           TEXT NOT NULL CHECK (role IN ('admin', 'member')),
    password_hash  TEXT,
    token_digest   TEXT NOT NULL UNIQUE,
    created_at     TEXT NOT NULL
);

CREATE TABLE sessions (
    digest      TEXT PRIMARY KEY NOT NULL,
    user_id     INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    revoked_at  TEXT
);

ALTER TABLE threads ADD COLUMN owner_id INTEGER REFERENCES users (id) ON DELETE SET NULL;
CREATE INDEX threads_by_owner ON threads (owner_id);

CREATE TABLE thread_members (
    thread_id  TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role       TEXT NOT NULL CHECK (role IN ('viewer', 'editor')),
    PRIMARY KEY (thread_id, user_id)
);
CREATE INDEX thread_members_by_user ON thread_members (user_id);

ALTER TABLE messages ADD COLUMN by_name TEXT;
