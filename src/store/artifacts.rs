//! Artifacts: typed outputs stored with the turn that made them.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::repository::repository;
use super::{
    Artifact, ArtifactSummary, Context, StoreError,
    query::{params, row_shape},
    repository::now,
};
use crate::ThreadId;
use crate::panels::Panel;

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
    /// Stores an artifact and returns its id.
    pub async fn add_artifact(
        &mut self,
        thread_id: &ThreadId,
        artifact_type: &str,
        title: Option<&str>,
        payload: &Value,
        turn_index: i64,
    ) -> Result<i64, StoreError> {
        let at = now();
        let payload = serde_json::to_string(payload)?;
        let (id,): (i64,) = self
            .fetch_one(
                "INSERT INTO artifacts (thread_id, artifact_type, title, payload, turn_index, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
                &params![thread_id, artifact_type, title, &payload, turn_index, at],
            )
            .await
            .context("storing an artifact")?;
        self.mark(Panel::Artifacts);
        self.journal_mut().artifacts.push(id);
        Ok(id)
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
