//! Copying one thread's workspace and conversation into another: what a fork is made of. Every
//! copied row gets a new id (ids are unique across threads); the panels are recorded in the
//! journal as set whole, so the fork's history starts from what it was given.

use chrono::{DateTime, Utc};

use super::repository::repository;
use crate::panels::Panel;
use crate::thread_id::ThreadId;
use crate::{
    error::Context, error::StoreError, journal::ListOp, models::Artifact, models::Document,
    models::PlanStep, models::Preference, models::Thread, models::ThreadRow, plan::KEY_GAP,
    query::params, repository::now,
};

repository!(
    /// The raw writes of a fork.
    ForksRepo,
    forks
);

impl ForksRepo<'_> {
    /// Creates a thread that records where it was forked from.
    pub async fn create_fork(
        &mut self,
        id: &ThreadId,
        title: &str,
        turn_index: i64,
        from: (&ThreadId, i64),
    ) -> Result<Thread, StoreError> {
        let at = now();
        let row: Option<ThreadRow> = self
            .fetch_optional(
                "INSERT INTO threads (id, title, turn_index, created_at, updated_at, \
                 forked_from_thread, forked_from_rev) VALUES ($1, $2, $3, $4, $4, $5, $6) \
                 ON CONFLICT (id) DO NOTHING \
                 RETURNING id, title, turn_index, created_at, updated_at, forked_from_thread, \
                 forked_from_rev",
                &params![id, title, turn_index, at, from.0, from.1],
            )
            .await
            .context("creating a fork")?;
        row.map(Thread::from)
            .ok_or_else(|| StoreError::AlreadyExists(format!("thread {id:?}")))
    }

    /// Writes `steps` (their text, depth and done mark) as the whole plan of an empty thread;
    /// returns them with their new ids.
    pub async fn copy_plan(
        &mut self,
        thread_id: &ThreadId,
        steps: &[PlanStep],
    ) -> Result<Vec<PlanStep>, StoreError> {
        let at = now();
        let mut copied = Vec::with_capacity(steps.len());
        for (rank, step) in (1_i64..).zip(steps) {
            let row: PlanStep = self.fetch_one("INSERT INTO todos (thread_id, sort_key, text, depth, done, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id, text, depth, done", &params![thread_id, rank * KEY_GAP, &step.text, step.depth, step.done, at]).await
            .context("copying a step")?;
            copied.push(row);
        }
        if !copied.is_empty() {
            self.mark(Panel::Plan);
            self.journal_mut().plan.push(ListOp::Set {
                items: copied.clone(),
            });
        }
        Ok(copied)
    }

    /// Writes `items` (locks included) as the preferences of an empty thread, in order.
    pub async fn copy_preferences(
        &mut self,
        thread_id: &ThreadId,
        items: &[Preference],
    ) -> Result<Vec<Preference>, StoreError> {
        let at = now();
        let mut copied = Vec::with_capacity(items.len());
        for item in items {
            let (id,): (i64,) = self.fetch_one("INSERT INTO preferences (thread_id, title, subtitle, kind, locked, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id", &params![thread_id, &item.title, item.subtitle.as_deref(), item.kind.as_str(), item.locked, at]).await
            .context("copying a preference")?;
            copied.push(Preference { id, ..item.clone() });
        }
        if !copied.is_empty() {
            self.mark(Panel::Preferences);
            self.journal_mut().preferences.push(ListOp::Set {
                items: copied.clone(),
            });
        }
        Ok(copied)
    }

    /// Copies an artifact (payload, type, title, turn, time) into another thread.
    pub async fn copy_artifact(
        &mut self,
        thread_id: &ThreadId,
        artifact: &Artifact,
    ) -> Result<i64, StoreError> {
        let payload = serde_json::to_string(&artifact.payload)?;
        let (id,): (i64,) = self.fetch_one("INSERT INTO artifacts (thread_id, artifact_type, title, payload, turn_index, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6) RETURNING id", &params![thread_id, &artifact.summary.artifact_type, artifact.summary.title.as_deref(), &payload, artifact.summary.turn_index, artifact.summary.created_at]).await
        .context("copying an artifact")?;
        self.mark(Panel::Artifacts);
        self.journal_mut().artifacts.push(id);
        Ok(id)
    }

    /// Writes a document whole into a thread without one.
    pub async fn copy_document(
        &mut self,
        thread_id: &ThreadId,
        document: &Document,
    ) -> Result<(), StoreError> {
        self.documents()
            .set_document(thread_id, Some((&document.title, &document.content)))
            .await?;
        Ok(())
    }

    /// Copies the conversation of `from` into `to`: the turns up to `up_to_turn`, with the
    /// messages and tool calls recorded before `until`. A turn that had not ended by then is
    /// copied as cancelled. Sets `to`'s turn count and returns it.
    pub async fn copy_conversation(
        &mut self,
        from: &ThreadId,
        to: &ThreadId,
        up_to_turn: i64,
        until: DateTime<Utc>,
    ) -> Result<i64, StoreError> {
        self.execute(
            "INSERT INTO turns (thread_id, turn_index, status, error, started_at, finished_at, \
                                usage) \
                 SELECT $2, turn_index, \
                        CASE WHEN finished_at IS NOT NULL AND finished_at < $3 THEN status \
                             ELSE 'cancelled' END, \
                        CASE WHEN finished_at IS NOT NULL AND finished_at < $3 THEN error \
                             ELSE 'the thread was forked while this turn ran' END, \
                        started_at, \
                        CASE WHEN finished_at IS NOT NULL AND finished_at < $3 THEN finished_at \
                             ELSE $3 END, \
                        CASE WHEN finished_at IS NOT NULL AND finished_at < $3 THEN usage END \
                 FROM turns WHERE thread_id = $1 AND turn_index <= $4 AND started_at < $3",
            &params![from, to, until, up_to_turn],
        )
        .await
        .context("copying turns")?;
        self.execute("INSERT INTO messages (thread_id, turn_index, role, content, created_at, by_name) \
                 SELECT $2, m.turn_index, m.role, m.content, m.created_at, m.by_name FROM messages m \
                 JOIN turns t ON t.thread_id = $2 AND t.turn_index = m.turn_index \
                 WHERE m.thread_id = $1 AND m.created_at < $3 ORDER BY m.id", &params![from, to, until]).await
        .context("copying messages")?;
        self.execute("INSERT INTO tool_calls (thread_id, turn_index, call_index, tool, arguments, \
                 action_and_reasoning, result, success, duration_ms, created_at) \
                 SELECT $2, c.turn_index, c.call_index, c.tool, c.arguments, \
                        c.action_and_reasoning, c.result, c.success, c.duration_ms, c.created_at \
                 FROM tool_calls c JOIN turns t ON t.thread_id = $2 AND t.turn_index = c.turn_index \
                 WHERE c.thread_id = $1 AND c.created_at < $3 ORDER BY c.id", &params![from, to, until]).await
        .context("copying tool calls")?;
        let (turns,): (i64,) = self
            .fetch_one(
                "UPDATE threads SET turn_index = \
                 COALESCE((SELECT MAX(turn_index) FROM turns WHERE thread_id = $1), 0) \
                 WHERE id = $1 RETURNING turn_index",
                &params![to],
            )
            .await
            .context("counting the copied turns")?;
        Ok(turns)
    }
}
