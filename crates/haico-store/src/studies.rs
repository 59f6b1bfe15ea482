//! Studies (issue 42): designs, their conditions and participants' sessions. The rules (what a
//! design may say, who is assigned where, what the clock does) live in `haico::studies`; this
//! file only reads and writes rows.
//!
//! Assignment must hold under parallel consents on every replica: [`StudiesRepo::lock_study`]
//! serialises the transactions that assign within one study (PostgreSQL: the study's row
//! `FOR UPDATE`; SQLite: the write transaction is `BEGIN IMMEDIATE`, which serialises every
//! writer of the file already), so counting and inserting happen as one step.

use chrono::{DateTime, Utc};

use super::repository::repository;
use crate::panels::spelled;
use crate::{
    error::Context, error::StoreError, people::Member, query::params, query::row_shape,
    repository::Backend, repository::now,
};
use serde::{Deserialize, Serialize};

/// A study as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyRow {
    /// Its id.
    pub id: String,
    /// The account that made it (`None` in one-person mode or once the account is gone).
    pub owner_id: Option<i64>,
    /// That account's name.
    pub owner: Option<String>,
    /// Its title.
    pub title: String,
    /// Where it stands.
    pub status: StudyStatus,
    /// The secret part of its entry link.
    pub entry_key: String,
    /// The key of its pseudonyms; never leaves the server.
    pub secret: String,
    /// The design, as JSON.
    pub design: String,
    /// When it was made.
    pub created_at: DateTime<Utc>,
}

row_shape!(StudyRow {
    id: String, owner_id: Option<i64>, owner: Option<String>, title: String, status: StudyStatus,
    entry_key: String, secret: String, design: String, created_at: DateTime<Utc>,
} => StudyRow { id, owner_id, owner, title, status, entry_key, secret, design, created_at });

spelled! {
    /// Where a study stands: designed, recruiting, or done.
    pub enum StudyStatus as "study status" {
        /// Being designed: its design may change, and its link takes nobody.
        Draft = "draft",
        /// Recruiting: its design is frozen.
        Open = "open",
        /// Done: its link takes nobody new.
        Closed = "closed",
    }
}

spelled! {
    /// Where a participant's session stands, from arriving to leaving.
    pub enum SessionStatus as "session status" {
        /// Arrived, not yet decided on consent.
        Entered = "entered",
        /// Declined to take part.
        Declined = "declined",
        /// Consented and given a condition and a thread; not started.
        Assigned = "assigned",
        /// Started; the clock runs.
        Active = "active",
        /// Finished.
        Completed = "completed",
        /// Ran out of time.
        TimedOut = "timed_out",
        /// Left before the end.
        Withdrawn = "withdrawn",
    }
}

/// One condition's balance numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct ConditionRow {
    /// Its key.
    pub condition_key: String,
    /// Its place in the design.
    pub ordinal: i64,
    /// Its weight.
    pub weight: f64,
    /// Its cap, if any.
    pub target: Option<i64>,
    /// Whether it takes new participants.
    pub recruiting: bool,
    /// Sessions that count towards its balance.
    pub counted: i64,
}

row_shape!(ConditionRow {
    condition_key: String, ordinal: i64, weight: f64, target: Option<i64>, recruiting: bool,
    counted: i64,
} => ConditionRow { condition_key, ordinal, weight, target, recruiting, counted });

/// A participant's session as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    /// Its pseudonymous reference (8 characters).
    pub session_ref: String,
    /// Its study.
    pub study_id: String,
    /// The participant id's keyed hash, when an id was given.
    pub participant_key: Option<String>,
    /// The participant id as given (only the owner's raw export shows it).
    pub participant_id: Option<String>,
    /// The configured parameters it arrived with, as a JSON object.
    pub params: String,
    /// Where it stands.
    pub status: SessionStatus,
    /// The condition, once assigned.
    pub condition_key: Option<String>,
    /// Its thread, once assigned.
    pub thread_id: Option<String>,
    /// A researcher's preview, which counts nowhere.
    pub preview: bool,
    /// When it entered.
    pub entered_at: DateTime<Utc>,
    /// When it consented (or declined).
    pub consented_at: Option<DateTime<Utc>>,
    /// When it pressed Start.
    pub started_at: Option<DateTime<Utc>>,
    /// When its time is up.
    pub deadline: Option<DateTime<Utc>>,
    /// When it was warned.
    pub warned_at: Option<DateTime<Utc>>,
    /// When it ended (completed, timed out, withdrawn).
    pub ended_at: Option<DateTime<Utc>>,
}

row_shape!(SessionRow as SESSION_COLUMNS {
    session_ref: String, study_id: String, participant_key: Option<String>,
    participant_id: Option<String>, params: String, status: SessionStatus,
    condition_key: Option<String>, thread_id: Option<String>, preview: bool,
    entered_at: DateTime<Utc>, consented_at: Option<DateTime<Utc>>,
    started_at: Option<DateTime<Utc>>, deadline: Option<DateTime<Utc>>,
    warned_at: Option<DateTime<Utc>>, ended_at: Option<DateTime<Utc>>,
} => SessionRow {
    session_ref, study_id, participant_key, participant_id, params, status, condition_key,
    thread_id, preview, entered_at, consented_at, started_at, deadline, warned_at, ended_at,
});

/// What a new session is.
#[derive(Debug, Clone, Copy)]
pub struct NewSession<'a> {
    /// Its reference.
    pub session_ref: &'a str,
    /// Its study.
    pub study_id: &'a str,
    /// The participant id's keyed hash.
    pub participant_key: Option<&'a str>,
    /// The participant id.
    pub participant_id: Option<&'a str>,
    /// The kept parameters, as a JSON object.
    pub params: &'a str,
    /// The participant token's digest.
    pub token_digest: &'a str,
    /// A preview.
    pub preview: bool,
}

/// The statuses whose sessions count towards a condition's balance.
const COUNTED: &str =
    "s.preview = $2 AND s.status IN ('assigned', 'active', 'completed', 'timed_out')";

/// The study's columns with its owner's name.
fn study_select() -> String {
    "SELECT s.id, s.owner_id, u.name AS owner, s.title, s.status, s.entry_key, s.secret, \
     s.design, s.created_at FROM studies AS s LEFT JOIN users AS u ON u.id = s.owner_id"
        .to_string()
}

repository!(
    /// Studies, their conditions and their sessions.
    StudiesRepo,
    studies
);

impl StudiesRepo<'_> {
    /// Stores a new study in `draft`.
    #[allow(clippy::too_many_arguments)]
    pub async fn insert_study(
        &mut self,
        id: &str,
        owner_id: Option<i64>,
        title: &str,
        entry_key: &str,
        secret: &str,
        design: &str,
    ) -> Result<(), StoreError> {
        let at = now();
        self.execute(
            "INSERT INTO studies (id, owner_id, title, status, entry_key, secret, design, \
             created_at, updated_at) VALUES ($1, $2, $3, 'draft', $4, $5, $6, $7, $7)",
            &params![id, owner_id, title, entry_key, secret, design, at],
        )
        .await
        .map(|_| ())
        .context("storing a study")
    }

    /// Replaces the study's conditions (a draft's, whose design changed).
    pub async fn replace_conditions(
        &mut self,
        study_id: &str,
        conditions: &[(String, f64, Option<i64>, bool)],
    ) -> Result<(), StoreError> {
        self.execute(
            "DELETE FROM study_conditions WHERE study_id = $1",
            &params![study_id],
        )
        .await
        .context("replacing a study's conditions")?;
        for (ordinal, (key, weight, target, recruiting)) in conditions.iter().enumerate() {
            let ordinal = i64::try_from(ordinal).unwrap_or(i64::MAX);
            self.execute(
                "INSERT INTO study_conditions (study_id, condition_key, ordinal, weight, target, \
                 recruiting) VALUES ($1, $2, $3, $4, $5, $6)",
                &params![
                    study_id,
                    key.as_str(),
                    ordinal,
                    *weight,
                    *target,
                    *recruiting
                ],
            )
            .await
            .context("storing a study's condition")?;
        }
        Ok(())
    }

    /// The study with `id`.
    pub async fn study(&mut self, id: &str) -> Result<Option<StudyRow>, StoreError> {
        let sql = format!("{} WHERE s.id = $1", study_select());
        self.fetch_optional(&sql, &params![id])
            .await
            .context("reading a study")
    }

    /// The study whose entry link carries `key`.
    pub async fn study_by_entry_key(&mut self, key: &str) -> Result<Option<StudyRow>, StoreError> {
        let sql = format!("{} WHERE s.entry_key = $1", study_select());
        self.fetch_optional(&sql, &params![key])
            .await
            .context("reading a study by its entry key")
    }

    /// Every study, newest first; when `user` is given, only those it owns or is a member of.
    pub async fn list_studies(&mut self, user: Option<i64>) -> Result<Vec<StudyRow>, StoreError> {
        let sql = format!(
            "{} WHERE ($1 IS NULL OR s.owner_id = $1 OR EXISTS (SELECT 1 FROM study_members \
             AS m WHERE m.study_id = s.id AND m.user_id = $1)) \
             ORDER BY s.created_at DESC, s.id",
            study_select()
        );
        self.fetch_all(&sql, &params![user])
            .await
            .context("listing studies")
    }

    /// `user`'s role as a member of the study (`editor` or `viewer`), when it is one.
    pub async fn member_role(
        &mut self,
        study_id: &str,
        user: i64,
    ) -> Result<Option<String>, StoreError> {
        let row: Option<(String,)> = self
            .fetch_optional(
                "SELECT role FROM study_members WHERE study_id = $1 AND user_id = $2",
                &params![study_id, user],
            )
            .await
            .context("reading a study member's role")?;
        Ok(row.map(|(role,)| role))
    }

    /// The studies `user` is a member of, with its role in each.
    pub async fn member_roles(&mut self, user: i64) -> Result<Vec<(String, String)>, StoreError> {
        self.fetch_all(
            "SELECT study_id, role FROM study_members WHERE user_id = $1",
            &params![user],
        )
        .await
        .context("listing a person's study roles")
    }

    /// The study's owner (first, when it has one) and members, by name, as threads list them.
    pub async fn members(&mut self, study_id: &str) -> Result<Vec<Member>, StoreError> {
        self.fetch_all(
            "SELECT name, role FROM ( \
                     SELECT u.name AS name, 'owner' AS role FROM studies s \
                     JOIN users u ON u.id = s.owner_id WHERE s.id = $1 \
                     UNION ALL \
                     SELECT u.name AS name, m.role AS role FROM study_members m \
                     JOIN users u ON u.id = m.user_id WHERE m.study_id = $1) AS x \
                 ORDER BY CASE role WHEN 'owner' THEN 0 WHEN 'editor' THEN 1 ELSE 2 END, name",
            &params![study_id],
        )
        .await
        .context("listing a study's members")
    }

    /// Adds `user` to the study as `role`; `false` when it is a member already (nothing
    /// changes then: a role is changed by [`Self::set_member_role`], on purpose).
    pub async fn add_member(
        &mut self,
        study_id: &str,
        user: i64,
        role: &str,
    ) -> Result<bool, StoreError> {
        let added = self
            .execute(
                "INSERT INTO study_members (study_id, user_id, role, added_at) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (study_id, user_id) DO NOTHING",
                &params![study_id, user, role, now()],
            )
            .await
            .context("adding a study member")?;
        Ok(added > 0)
    }

    /// Changes a member's role; `false` when `user` is no member of the study.
    pub async fn set_member_role(
        &mut self,
        study_id: &str,
        user: i64,
        role: &str,
    ) -> Result<bool, StoreError> {
        let changed = self
            .execute(
                "UPDATE study_members SET role = $3 WHERE study_id = $1 AND user_id = $2",
                &params![study_id, user, role],
            )
            .await
            .context("changing a study member's role")?;
        Ok(changed > 0)
    }

    /// Removes `user` from the study's members; whether it was one.
    pub async fn remove_member(&mut self, study_id: &str, user: i64) -> Result<bool, StoreError> {
        let removed = self
            .execute(
                "DELETE FROM study_members WHERE study_id = $1 AND user_id = $2",
                &params![study_id, user],
            )
            .await
            .context("removing a study member")?;
        Ok(removed > 0)
    }

    /// Replaces a draft's title and design; `false` when it is no longer a draft.
    pub async fn update_design(
        &mut self,
        id: &str,
        title: &str,
        design: &str,
    ) -> Result<bool, StoreError> {
        let changed = self
            .execute(
                "UPDATE studies SET title = $2, design = $3, updated_at = $4 \
                 WHERE id = $1 AND status = 'draft'",
                &params![id, title, design, now()],
            )
            .await
            .context("changing a study's design")?;
        Ok(changed > 0)
    }

    /// Keeps the design's JSON in step with a condition's recruiting flag and target (which
    /// stay editable once open): the whole design as it now reads.
    pub async fn set_design_json(&mut self, id: &str, design: &str) -> Result<(), StoreError> {
        self.execute(
            "UPDATE studies SET design = $2, updated_at = $3 WHERE id = $1",
            &params![id, design, now()],
        )
        .await
        .map(|_| ())
        .context("changing a study's design")
    }

    /// Sets a condition's recruiting flag and target.
    pub async fn set_recruiting(
        &mut self,
        id: &str,
        key: &str,
        recruiting: bool,
        target: Option<i64>,
    ) -> Result<(), StoreError> {
        self.execute(
            "UPDATE study_conditions SET recruiting = $3, target = $4 \
             WHERE study_id = $1 AND condition_key = $2",
            &params![id, key, recruiting, target],
        )
        .await
        .map(|_| ())
        .context("changing a condition's recruiting")
    }

    /// Moves the study from `from` to `to`; `false` when it was not in `from`.
    pub async fn move_status(
        &mut self,
        id: &str,
        from: StudyStatus,
        to: StudyStatus,
    ) -> Result<bool, StoreError> {
        let moved = self
            .execute(
                "UPDATE studies SET status = $3, updated_at = $4 WHERE id = $1 AND status = $2",
                &params![id, from.as_str(), to.as_str(), now()],
            )
            .await
            .context("changing a study's status")?;
        Ok(moved > 0)
    }

    /// Deletes the study with its conditions and sessions (their threads are deleted above
    /// this layer, through the workspace).
    pub async fn delete_study(&mut self, id: &str) -> Result<bool, StoreError> {
        let deleted = self
            .execute("DELETE FROM studies WHERE id = $1", &params![id])
            .await
            .context("deleting a study")?;
        Ok(deleted > 0)
    }

    /// Holds the study until this transaction ends, so assignments within it run one after
    /// another on every replica. SQLite's write transaction holds the whole file already.
    pub async fn lock_study(&mut self, id: &str) -> Result<bool, StoreError> {
        if self.backend() == Backend::Sqlite {
            return Ok(true);
        }
        let row: Option<(String,)> = self
            .fetch_optional(
                "SELECT id FROM studies WHERE id = $1 FOR UPDATE",
                &params![id],
            )
            .await
            .context("holding a study for an assignment")?;
        Ok(row.is_some())
    }

    /// The study's conditions in design order, each with the sessions counting towards it
    /// (previews only when `preview`).
    pub async fn conditions(
        &mut self,
        study_id: &str,
        preview: bool,
    ) -> Result<Vec<ConditionRow>, StoreError> {
        let sql = format!(
            "SELECT c.condition_key, c.ordinal, c.weight, c.target, c.recruiting, \
             (SELECT COUNT(*) FROM study_sessions AS s WHERE s.study_id = c.study_id \
              AND s.condition_key = c.condition_key AND {COUNTED}) AS counted \
             FROM study_conditions AS c WHERE c.study_id = $1 ORDER BY c.ordinal"
        );
        self.fetch_all(&sql, &params![study_id, preview])
            .await
            .context("counting a study's conditions")
    }

    /// Stores a new session (`entered`).
    pub async fn insert_session(&mut self, new: NewSession<'_>) -> Result<(), StoreError> {
        self.execute(
            "INSERT INTO study_sessions (session_ref, study_id, participant_key, participant_id, \
             params, token_digest, status, preview, entered_at) \
             VALUES ($1, $2, $3, $4, $5, $6, 'entered', $7, $8)",
            &params![
                new.session_ref,
                new.study_id,
                new.participant_key,
                new.participant_id,
                new.params,
                new.token_digest,
                new.preview,
                now()
            ],
        )
        .await
        .map(|_| ())
        .context("storing a session")
    }

    /// Gives a session a new token (the participant came back; the old token ends).
    pub async fn replace_token(
        &mut self,
        session_ref: &str,
        digest: &str,
    ) -> Result<(), StoreError> {
        self.execute(
            "UPDATE study_sessions SET token_digest = $2 WHERE session_ref = $1",
            &params![session_ref, digest],
        )
        .await
        .map(|_| ())
        .context("renewing a session's token")
    }

    /// The study's session of the participant whose id hashes to `key`.
    pub async fn session_of_participant(
        &mut self,
        study_id: &str,
        key: &str,
    ) -> Result<Option<SessionRow>, StoreError> {
        let sql = format!(
            "SELECT {SESSION_COLUMNS} FROM study_sessions \
             WHERE study_id = $1 AND participant_key = $2"
        );
        self.fetch_optional(&sql, &params![study_id, key])
            .await
            .context("finding a participant's session")
    }

    /// The session whose token has `digest`.
    pub async fn session_by_token(
        &mut self,
        digest: &str,
    ) -> Result<Option<SessionRow>, StoreError> {
        let sql = format!("SELECT {SESSION_COLUMNS} FROM study_sessions WHERE token_digest = $1");
        self.fetch_optional(&sql, &params![digest])
            .await
            .context("finding a session by its token")
    }

    /// The session `session_ref`.
    pub async fn session(&mut self, session_ref: &str) -> Result<Option<SessionRow>, StoreError> {
        let sql = format!("SELECT {SESSION_COLUMNS} FROM study_sessions WHERE session_ref = $1");
        self.fetch_optional(&sql, &params![session_ref])
            .await
            .context("reading a session")
    }

    /// The session whose thread is `thread_id`.
    pub async fn session_of_thread(
        &mut self,
        thread_id: &str,
    ) -> Result<Option<SessionRow>, StoreError> {
        let sql = format!("SELECT {SESSION_COLUMNS} FROM study_sessions WHERE thread_id = $1");
        self.fetch_optional(&sql, &params![thread_id])
            .await
            .context("finding a thread's session")
    }

    /// Every session of the study, in the order they entered.
    pub async fn sessions(&mut self, study_id: &str) -> Result<Vec<SessionRow>, StoreError> {
        let sql = format!(
            "SELECT {SESSION_COLUMNS} FROM study_sessions WHERE study_id = $1 \
             ORDER BY entered_at, session_ref"
        );
        self.fetch_all(&sql, &params![study_id])
            .await
            .context("listing a study's sessions")
    }

    /// Whether any session exists (studies are in use on this database).
    pub async fn any_session(&mut self) -> Result<bool, StoreError> {
        let (exists,): (bool,) = self
            .fetch_one("SELECT EXISTS (SELECT 1 FROM study_sessions)", &params![])
            .await
            .context("checking for study sessions")?;
        Ok(exists)
    }

    /// Records a consent decision: `declined`, or `assigned` to `condition` with `thread`.
    /// Only a session still `entered` moves; `false` otherwise.
    pub async fn decide_consent(
        &mut self,
        session_ref: &str,
        assigned: Option<(&str, &str)>,
    ) -> Result<bool, StoreError> {
        let (status, condition, thread) = match assigned {
            Some((condition, thread)) => (SessionStatus::Assigned, Some(condition), Some(thread)),
            None => (SessionStatus::Declined, None, None),
        };
        let ended = assigned.is_none().then(now);
        let moved = self
            .execute(
                "UPDATE study_sessions SET status = $2, condition_key = $3, thread_id = $4, \
                 consented_at = $5, ended_at = $6 WHERE session_ref = $1 AND status = 'entered'",
                &params![
                    session_ref,
                    status.as_str(),
                    condition,
                    thread,
                    now(),
                    ended
                ],
            )
            .await
            .context("recording a consent")?;
        Ok(moved > 0)
    }

    /// Starts the clock of an `assigned` session; `false` when it was not assigned.
    pub async fn start(
        &mut self,
        session_ref: &str,
        deadline: Option<DateTime<Utc>>,
    ) -> Result<bool, StoreError> {
        let moved = self
            .execute(
                "UPDATE study_sessions SET status = 'active', started_at = $2, deadline = $3 \
                 WHERE session_ref = $1 AND status = 'assigned'",
                &params![session_ref, now(), deadline],
            )
            .await
            .context("starting a session")?;
        Ok(moved > 0)
    }

    /// Ends a session that is in one of `from` with `status`; `false` when it was in none.
    pub async fn end(
        &mut self,
        session_ref: &str,
        from: &[SessionStatus],
        status: SessionStatus,
    ) -> Result<bool, StoreError> {
        let mut moved = 0;
        for from in from {
            moved += self
                .execute(
                    "UPDATE study_sessions SET status = $3, ended_at = $4 \
                     WHERE session_ref = $1 AND status = $2",
                    &params![session_ref, from.as_str(), status.as_str(), now()],
                )
                .await
                .context("ending a session")?;
        }
        Ok(moved > 0)
    }

    /// Marks a session warned; `false` when it already was or is no longer active.
    pub async fn mark_warned(&mut self, session_ref: &str) -> Result<bool, StoreError> {
        let moved = self
            .execute(
                "UPDATE study_sessions SET warned_at = $2 \
                 WHERE session_ref = $1 AND status = 'active' AND warned_at IS NULL",
                &params![session_ref, now()],
            )
            .await
            .context("marking a session warned")?;
        Ok(moved > 0)
    }

    /// Active sessions with work for the clock: past their deadline at `now`, or not yet
    /// warned with a deadline before `horizon`; soonest first.
    pub async fn clock_due(
        &mut self,
        now: DateTime<Utc>,
        horizon: DateTime<Utc>,
    ) -> Result<Vec<SessionRow>, StoreError> {
        let sql = format!(
            "SELECT {SESSION_COLUMNS} FROM study_sessions WHERE status = 'active' \
             AND deadline IS NOT NULL AND deadline <= $2 \
             AND (deadline <= $1 OR warned_at IS NULL) ORDER BY deadline LIMIT 500"
        );
        self.fetch_all(&sql, &params![now, horizon])
            .await
            .context("finding sessions near their deadline")
    }
}
