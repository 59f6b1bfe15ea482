-- Issue 42, item 1: a study is shared the way a thread is. A member is an account with a role
-- on one study (`viewer` reads the study and its pseudonymised data, `editor` also changes and
-- runs it); its owner stays in `studies.owner_id` and is never a row here. One row per
-- (study, account), so adding someone twice is refused by the key, not by a race.
CREATE TABLE study_members (
    study_id   TEXT NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role       TEXT NOT NULL CHECK (role IN ('viewer', 'editor')),
    added_at   TEXT NOT NULL,
    PRIMARY KEY (study_id, user_id)
);
CREATE INDEX study_members_by_user ON study_members (user_id);
