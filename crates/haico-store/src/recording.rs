//! The raw reads and writes of a thread's recording (export and import): every row as it was,
//! timestamps included, so a thread can leave one database and arrive in another unchanged.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::repository::repository;
use crate::thread_id::ThreadId;
use crate::{
    error::Context, error::StoreError, query::params, query::row_shape, repository::Backend,
};

/// A stored panel record, with its panel, for export.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct PanelRow {
    /// The panel.
    pub panel: String,
    /// The revision.
    pub rev: i64,
    /// Whole state or operations.
    pub whole: bool,
    /// The JSON.
    pub data: String,
}

row_shape!(PanelRow { panel: String, rev: i64, whole: bool, data: String } => PanelRow {
    panel,
    rev,
    whole,
    data,
});

/// An artifact with everything a recording keeps of it.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct ArtifactRow {
    /// Its id.
    pub id: i64,
    /// Its type tag.
    pub artifact_type: String,
    /// Its title.
    pub title: Option<String>,
    /// Its payload, as JSON text.
    pub payload: String,
    /// The turn that made it.
    pub turn_index: i64,
    /// The revision that made it.
    pub rev: Option<i64>,
    /// When it was stored.
    pub created_at: DateTime<Utc>,
}

row_shape!(ArtifactRow {
    id: i64,
    artifact_type: String,
    title: Option<String>,
    payload: String,
    turn_index: i64,
    rev: Option<i64>,
    created_at: DateTime<Utc>,
} => ArtifactRow { id, artifact_type, title, payload, turn_index, rev, created_at });

/// A message to write back as it was.
#[derive(Debug, Clone, Copy)]
pub struct OldMessage<'a> {
    /// Its turn.
    pub turn_index: i64,
    /// `user` or `assistant`.
    pub role: &'a str,
    /// The text.
    pub content: &'a str,
    /// When it was written.
    pub at: DateTime<Utc>,
    /// Who wrote it, when known.
    pub by: Option<&'a str>,
}

repository!(
    /// The raw reads and writes of recordings.
    RecordingsRepo,
    recordings
);

impl RecordingsRepo<'_> {
    /// Every panel record of the thread, by revision then panel.
    pub async fn all_panel_records(
        &mut self,
        thread_id: &ThreadId,
    ) -> Result<Vec<PanelRow>, StoreError> {
        self.fetch_all(
            "SELECT panel, rev, whole, data FROM panel_changes WHERE thread_id = $1 \
                 ORDER BY rev, panel",
            &params![thread_id],
        )
        .await
        .context("reading the panels' history")
    }

    /// Every artifact of the thread, oldest first, with payloads.
    pub async fn all_artifacts(
        &mut self,
        thread_id: &ThreadId,
    ) -> Result<Vec<ArtifactRow>, StoreError> {
        self.fetch_all(
            "SELECT id, artifact_type, title, payload, turn_index, rev, created_at \
                 FROM artifacts WHERE thread_id = $1 ORDER BY id",
            &params![thread_id],
        )
        .await
        .context("reading artifacts")
    }

    /// Creates a thread with its recorded title, creation time and turn count.
    pub async fn insert_recorded_thread(
        &mut self,
        id: &ThreadId,
        title: &str,
        created_at: DateTime<Utc>,
        turn_index: i64,
        forked_from: Option<(&str, i64)>,
    ) -> Result<(), StoreError> {
        let result = self
            .execute(
                "INSERT INTO threads (id, title, turn_index, created_at, updated_at, \
                 forked_from_thread, forked_from_rev) VALUES ($1, $2, $3, $4, $4, $5, $6)",
                &params![
                    id,
                    title,
                    turn_index,
                    created_at,
                    forked_from.map(|f| f.0),
                    forked_from.map(|f| f.1)
                ],
            )
            .await
            .context("creating the imported thread");
        match result {
            Ok(_) => Ok(()),
            Err(err) if err.is_unique_violation() => {
                Err(StoreError::AlreadyExists(format!("thread {id:?}")))
            }
            Err(err) => Err(err),
        }
    }

    /// Writes a turn back as it was.
    pub async fn insert_recorded_turn(
        &mut self,
        thread_id: &ThreadId,
        turn_index: i64,
        status: &str,
        error: Option<&str>,
        (started_at, finished_at): (DateTime<Utc>, Option<DateTime<Utc>>),
        usage: Option<&crate::usage::TurnUsage>,
    ) -> Result<(), StoreError> {
        let usage = usage.map(serde_json::to_string).transpose()?;
        self.execute(
            "INSERT INTO turns (thread_id, turn_index, status, error, started_at, finished_at, \
                                usage) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &params![
                thread_id,
                turn_index,
                status,
                error,
                started_at,
                finished_at,
                usage.as_ref()
            ],
        )
        .await
        .context("writing a turn")?;
        Ok(())
    }

    /// Writes a message back as it was.
    pub async fn insert_recorded_message(
        &mut self,
        thread_id: &ThreadId,
        message: OldMessage<'_>,
    ) -> Result<(), StoreError> {
        self.execute(
            "INSERT INTO messages (thread_id, turn_index, role, content, created_at, by_name) \
                 VALUES ($1, $2, $3, $4, $5, $6)",
            &params![
                thread_id,
                message.turn_index,
                message.role,
                message.content,
                message.at,
                message.by
            ],
        )
        .await
        .context("writing a message")?;
        Ok(())
    }

    /// Writes a tool call of a turn back as it was.
    #[allow(clippy::too_many_arguments)]
    pub async fn insert_recorded_tool_call(
        &mut self,
        thread_id: &ThreadId,
        call: crate::conversation::NewToolCall<'_>,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let arguments = serde_json::to_string(call.arguments)?;
        let result = serde_json::to_string(call.result)?;
        self.execute(
            "INSERT INTO tool_calls (thread_id, turn_index, call_index, tool, arguments, \
                 action_and_reasoning, result, success, duration_ms, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            &params![
                thread_id,
                call.turn_index,
                call.call_index,
                call.tool,
                &arguments,
                call.action_and_reasoning,
                &result,
                call.success,
                call.duration_ms,
                at
            ],
        )
        .await
        .context("writing a tool call")?;
        Ok(())
    }

    /// Writes an artifact back as it was (under a new id); returns the id.
    #[allow(clippy::too_many_arguments)]
    pub async fn insert_recorded_artifact(
        &mut self,
        thread_id: &ThreadId,
        artifact_type: &str,
        title: Option<&str>,
        payload: &Value,
        turn_index: i64,
        rev: i64,
        at: DateTime<Utc>,
    ) -> Result<i64, StoreError> {
        let payload = serde_json::to_string(payload)?;
        let (id,): (i64,) = self
            .fetch_one(
                "INSERT INTO artifacts (thread_id, artifact_type, title, payload, turn_index, \
                 created_at, rev) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
                &params![
                    thread_id,
                    artifact_type,
                    title,
                    &payload,
                    turn_index,
                    at,
                    rev
                ],
            )
            .await
            .context("writing an artifact")?;
        Ok(id)
    }

    /// Sets the thread's revision counter.
    pub async fn set_last_revision(
        &mut self,
        thread_id: &ThreadId,
        rev: i64,
    ) -> Result<(), StoreError> {
        self.execute(
            "INSERT INTO event_seqs (thread_id, last_seq, last_rev) VALUES ($1, 0, $2) \
                 ON CONFLICT (thread_id) DO UPDATE SET last_rev = $2",
            &params![thread_id, rev],
        )
        .await
        .context("setting the revision counter")?;
        Ok(())
    }

    /// Reserves `n` fresh ids of `table` (`todos` or `preferences`) that no row has or will
    /// get, for rows written back under new ids.
    pub async fn reserve_ids(&mut self, table: IdTable, n: usize) -> Result<Vec<i64>, StoreError> {
        if n == 0 {
            return Ok(Vec::new());
        }
        let name = table.name();
        let count = i64::try_from(n).unwrap_or(i64::MAX);
        match self.backend() {
            Backend::Postgres => {
                let sql = format!(
                    "SELECT nextval(pg_get_serial_sequence('{name}', 'id')) FROM generate_series(1, $1)"
                );
                let rows: Vec<(i64,)> = self
                    .fetch_all(&sql, &params![count])
                    .await
                    .context("reserving ids")?;
                Ok(rows.into_iter().map(|(id,)| id).collect())
            }
            Backend::Sqlite => {
                // The transaction holds SQLite's write lock: nobody else takes an id meanwhile.
                let sql = format!(
                    "SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = '{name}'), 0), \
                     COALESCE((SELECT MAX(id) FROM {name}), 0))"
                );
                let (top,): (i64,) = self.fetch_one(&sql, &[]).await.context("reserving ids")?;
                let last = top + count;
                self.execute(
                    "UPDATE sqlite_sequence SET seq = $2 WHERE name = $1",
                    &params![name, last],
                )
                .await
                .context("reserving ids")?;
                self.execute(
                    "INSERT INTO sqlite_sequence (name, seq) SELECT $1, $2 \
                     WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = $1)",
                    &params![name, last],
                )
                .await
                .context("reserving ids")?;
                Ok((top + 1..=last).collect())
            }
        }
    }
}

/// The tables whose ids a recording's panel history names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdTable {
    /// Plan steps.
    Steps,
    /// Preferences.
    Preferences,
}

impl IdTable {
    fn name(self) -> &'static str {
        match self {
            IdTable::Steps => "todos",
            IdTable::Preferences => "preferences",
        }
    }
}
