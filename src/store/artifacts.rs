//! Artifacts: typed outputs stored with the turn that made them.

use serde_json::Value;

use super::{
    Artifact, ArtifactSummary, Context, StoreError,
    repository::{WorkspaceRepository, now, with_conn},
};
use crate::panels::Panel;

#[derive(sqlx::FromRow)]
struct ArtifactRow {
    #[sqlx(flatten)]
    summary: ArtifactSummary,
    payload: String,
}

impl WorkspaceRepository {
    /// Stores an artifact and returns its id.
    pub async fn add_artifact(
        &mut self,
        thread_id: &str,
        artifact_type: &str,
        title: Option<&str>,
        payload: &Value,
        turn_index: i64,
    ) -> Result<i64, StoreError> {
        let at = now();
        let payload = serde_json::to_string(payload)?;
        let (id,): (i64,) = with_conn!(self, conn => {
            sqlx::query_as(
                "INSERT INTO artifacts (thread_id, artifact_type, title, payload, turn_index, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
            )
            .bind(thread_id)
            .bind(artifact_type)
            .bind(title)
            .bind(payload)
            .bind(turn_index)
            .bind(at)
            .fetch_one(conn)
            .await
        })
        .context("storing an artifact")?;
        self.mark(Panel::Artifacts);
        self.journal_mut().artifacts.push(id);
        Ok(id)
    }

    /// The thread's artifacts, newest first, optionally of one type, at most `limit`.
    pub async fn list_artifacts(
        &mut self,
        thread_id: &str,
        artifact_type: Option<&str>,
        limit: i64,
    ) -> Result<Vec<ArtifactSummary>, StoreError> {
        with_conn!(self, conn => {
            sqlx::query_as(
                "SELECT id, artifact_type, title, turn_index, created_at FROM artifacts \
                 WHERE thread_id = $1 AND ($2 IS NULL OR artifact_type = $2) \
                 ORDER BY id DESC LIMIT $3",
            )
            .bind(thread_id)
            .bind(artifact_type)
            .bind(limit)
            .fetch_all(conn)
            .await
        })
        .context("listing artifacts")
    }

    /// One artifact of this thread; another thread's id finds nothing.
    pub async fn get_artifact(
        &mut self,
        thread_id: &str,
        id: i64,
    ) -> Result<Option<Artifact>, StoreError> {
        let row: Option<ArtifactRow> = with_conn!(self, conn => {
            sqlx::query_as(
                "SELECT id, artifact_type, title, turn_index, created_at, payload FROM artifacts \
                 WHERE thread_id = $1 AND id = $2",
            )
            .bind(thread_id)
            .bind(id)
            .fetch_optional(conn)
            .await
        })
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
