//! The reads behind the agent's system prompt. The prompt shows only the start and end of a
//! long document and the first steps of a long plan, so these queries fetch just that, plus
//! the totals the prompt reports, instead of the whole workspace before every model call.

use super::{
    ArtifactSummary, Context, PlanStep, StoreError,
    repository::{Tx, WorkspaceRepository, with_conn},
};

/// The document as the prompt shows it: all of it when it fits, else its head and tail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentExcerpt {
    /// Title.
    pub title: String,
    /// The first characters (the whole body when it fits).
    pub head: String,
    /// The last characters; empty when the body fits whole.
    pub tail: String,
    /// Characters (code points) in the whole body.
    pub total_chars: i64,
}

/// The first steps of a plan and how many there are in all.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanPage {
    /// The first steps, in order.
    pub steps: Vec<PlanStep>,
    /// Steps in the whole plan.
    pub total: i64,
    /// Done steps in the whole plan.
    pub done: i64,
}

impl WorkspaceRepository {
    /// The document cut to `head + tail` characters: the body whole when it is no longer,
    /// else its first `head` and last `tail` characters.
    pub async fn document_excerpt(
        &mut self,
        thread_id: &str,
        head: i64,
        tail: i64,
    ) -> Result<Option<DocumentExcerpt>, StoreError> {
        let keep = head + tail;
        // SQLite counts text positions in characters, as PostgreSQL does; the tail is taken
        // with a negative start on SQLite and `right()` on PostgreSQL.
        let sql_sqlite = "SELECT title, \
             CASE WHEN length(content) <= $2 THEN content ELSE substr(content, 1, $3) END, \
             CASE WHEN length(content) <= $2 THEN '' ELSE substr(content, -$4) END, \
             CAST(length(content) AS BIGINT) FROM documents WHERE thread_id = $1";
        let sql_postgres = "SELECT title, \
             CASE WHEN length(content) <= $2 THEN content ELSE substr(content, 1, $3::int) END, \
             CASE WHEN length(content) <= $2 THEN '' ELSE right(content, $4::int) END, \
             CAST(length(content) AS BIGINT) FROM documents WHERE thread_id = $1";
        let row: Option<(String, String, String, i64)> = match &mut self.tx {
            Tx::Sqlite(tx) => {
                sqlx::query_as(sql_sqlite)
                    .bind(thread_id)
                    .bind(keep)
                    .bind(head)
                    .bind(tail)
                    .fetch_optional(&mut **tx)
                    .await
            }
            Tx::Postgres(tx) => {
                sqlx::query_as(sql_postgres)
                    .bind(thread_id)
                    .bind(keep)
                    .bind(head)
                    .bind(tail)
                    .fetch_optional(&mut **tx)
                    .await
            }
        }
        .context("reading the document excerpt")?;
        Ok(row.map(|(title, head, tail, total_chars)| DocumentExcerpt {
            title,
            head,
            tail,
            total_chars,
        }))
    }

    /// The first `limit` steps of the plan, with the plan's totals.
    pub async fn plan_page(&mut self, thread_id: &str, limit: i64) -> Result<PlanPage, StoreError> {
        let steps: Vec<PlanStep> = with_conn!(self, conn => {
            sqlx::query_as(
                "SELECT id, text, depth, done FROM todos WHERE thread_id = $1 \
                 ORDER BY sort_key LIMIT $2",
            )
            .bind(thread_id)
            .bind(limit)
            .fetch_all(conn)
            .await
        })
        .context("reading the plan")?;
        let (total, done): (i64, i64) = with_conn!(self, conn => {
            sqlx::query_as(
                "SELECT COUNT(*), COALESCE(SUM(CASE WHEN done THEN 1 ELSE 0 END), 0) \
                 FROM todos WHERE thread_id = $1",
            )
            .bind(thread_id)
            .fetch_one(conn)
            .await
        })
        .context("counting the plan")?;
        Ok(PlanPage { steps, total, done })
    }

    /// How many artifacts the thread has.
    pub async fn count_artifacts(&mut self, thread_id: &str) -> Result<i64, StoreError> {
        let (count,): (i64,) = with_conn!(self, conn => {
            sqlx::query_as("SELECT COUNT(*) FROM artifacts WHERE thread_id = $1")
                .bind(thread_id)
                .fetch_one(conn)
                .await
        })
        .context("counting artifacts")?;
        Ok(count)
    }

    /// The newest `limit` artifacts, for indexes that show only the latest.
    pub async fn recent_artifacts(
        &mut self,
        thread_id: &str,
        limit: i64,
    ) -> Result<Vec<ArtifactSummary>, StoreError> {
        self.list_artifacts(thread_id, None, limit).await
    }
}
