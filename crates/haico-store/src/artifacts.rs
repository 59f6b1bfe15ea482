//! Artifacts: typed outputs stored with the turn that made them.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::repository::repository;
use crate::panels::Panel;
use crate::thread_id::ThreadId;
use crate::{
    error::Context, error::StoreError, models::Artifact, models::ArtifactSummary, query::OnThread,
    query::params, query::row_shape, repository::now,
};

struct ArtifactRow {
    summary: ArtifactSummary,
    payload: String,
}

row_shape!(ArtifactRow {
    id: i64,
    artifact_type: String,
    title: Option<String>,
    turn_index: i64,
    created_at: DateTime<Utc>,
    payload: String,
} => ArtifactRow {
    summary: ArtifactSummary { id, artifact_type, title, turn_index, created_at },
    payload,
});

repository!(
    /// Artifacts: charts and other typed outputs.
    ArtifactsRepo,
    artifacts
);

impl ArtifactsRepo<'_> {
    /// Stores an artifact of `turn_index`, or, given `None`, of the thread's current turn,
    /// read in the same statement (so an agent's write on PostgreSQL can send it with the
    /// thread's lock, in one round trip). Returns its id and turn; `None` when the thread does
    /// not exist.
    pub async fn add_artifact(
        &mut self,
        thread_id: &ThreadId,
        artifact_type: &str,
        title: Option<&str>,
        payload: &Value,
        turn_index: Option<i64>,
    ) -> Result<Option<(i64, i64)>, StoreError> {
        let at = now();
        let payload = serde_json::to_string(payload)?;
        let stored: Option<(i64, i64)> = self
            .fetch_optional(
                "INSERT INTO artifacts (thread_id, artifact_type, title, payload, turn_index, created_at) \
                 SELECT $1, $2, $3, $4, COALESCE($5, t.turn_index), $6 FROM threads t WHERE t.id = $1 \
                 RETURNING id, turn_index",
                &params![thread_id, artifact_type, title, &payload, turn_index, at],
            )
            .await
            .context("storing an artifact")?;
        if let Some((id, _)) = stored {
            self.mark(Panel::Artifacts);
            self.journal_mut().artifacts.push(id);
        }
        Ok(stored)
    }

    /// The thread's artifacts, newest first, optionally of one type, at most `limit`.
    pub async fn list_artifacts(
        &mut self,
        thread_id: &ThreadId,
        artifact_type: Option<&str>,
        limit: i64,
    ) -> Result<Vec<ArtifactSummary>, StoreError> {
        self.fetch_all(
            "SELECT id, artifact_type, title, turn_index, created_at FROM artifacts \
                 WHERE thread_id = $1 AND ($2 IS NULL OR artifact_type = $2) \
                 ORDER BY id DESC LIMIT $3",
            &params![thread_id, artifact_type, limit],
        )
        .await
        .context("listing artifacts")
    }

    /// The thread's turn index and its artifacts as [`list_artifacts`](Self::list_artifacts)
    /// lists them, read in one statement (one round trip), or `None` when the thread does not
    /// exist: what a read-only tool needs.
    pub async fn artifacts_on_thread(
        &mut self,
        thread_id: &ThreadId,
        artifact_type: Option<&str>,
        limit: i64,
    ) -> Result<Option<(i64, Vec<ArtifactSummary>)>, StoreError> {
        let rows: Vec<OnThread<ArtifactSummary>> = self
            .fetch_all(
                "SELECT t.turn_index AS thread_turn, a.id IS NOT NULL AS found, a.* \
                 FROM threads t LEFT JOIN ( \
                   SELECT id, artifact_type, title, turn_index, created_at FROM artifacts \
                   WHERE thread_id = $1 AND ($2 IS NULL OR artifact_type = $2) \
                   ORDER BY id DESC LIMIT $3) a ON TRUE \
                 WHERE t.id = $1 ORDER BY a.id DESC",
                &params![thread_id.as_str(), artifact_type, limit],
            )
            .await
            .context("listing artifacts")?;
        Ok(OnThread::gather(rows))
    }

    /// The thread's turn index and one of its artifacts (`None` inside when it has no such
    /// artifact), read in one statement, or `None` when the thread does not exist.
    pub async fn artifact_on_thread(
        &mut self,
        thread_id: &ThreadId,
        id: i64,
    ) -> Result<Option<(i64, Option<Artifact>)>, StoreError> {
        let rows: Vec<OnThread<ArtifactRow>> = self
            .fetch_all(
                "SELECT t.turn_index AS thread_turn, a.id IS NOT NULL AS found, a.* \
                 FROM threads t LEFT JOIN ( \
                   SELECT id, artifact_type, title, turn_index, created_at, payload \
                   FROM artifacts WHERE thread_id = $1 AND id = $2) a ON TRUE \
                 WHERE t.id = $1",
                &params![thread_id.as_str(), id],
            )
            .await
            .context("reading an artifact")?;
        let Some((turn, rows)) = OnThread::gather(rows) else {
            return Ok(None);
        };
        let artifact = rows
            .into_iter()
            .next()
            .map(|row| -> Result<Artifact, StoreError> {
                Ok(Artifact {
                    summary: row.summary,
                    payload: serde_json::from_str(&row.payload)?,
                })
            })
            .transpose()?;
        Ok(Some((turn, artifact)))
    }

    /// One artifact of this thread; another thread's id finds nothing.
    pub async fn get_artifact(
        &mut self,
        thread_id: &ThreadId,
        id: i64,
    ) -> Result<Option<Artifact>, StoreError> {
        let row: Option<ArtifactRow> = self
            .fetch_optional(
                "SELECT id, artifact_type, title, turn_index, created_at, payload FROM artifacts \
                 WHERE thread_id = $1 AND id = $2",
                &params![thread_id, id],
            )
            .await
            .context("reading an artifact")?;
        row.map(|row| {
            Ok(Artifact {
                summary: row.summary,
                payload: serde_json::from_str(&row.payload)?,
            })
        })
        .transpose()
    }
}
