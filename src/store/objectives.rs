//! The one-line objective of a thread.

use super::{
    Context, StoreError,
    repository::{WorkspaceRepository, now, with_conn},
};
use crate::panels::Panel;

impl WorkspaceRepository {
    /// The objective, if one was set.
    pub async fn get_objective(&mut self, thread_id: &str) -> Result<Option<String>, StoreError> {
        let row: Option<(String,)> = with_conn!(self, conn => {
            sqlx::query_as("SELECT objective FROM objectives WHERE thread_id = $1")
                .bind(thread_id)
                .fetch_optional(conn)
                .await
        })
        .context("reading the objective")?;
        Ok(row.map(|(objective,)| objective))
    }

    /// Sets or replaces the objective.
    pub async fn set_objective(
        &mut self,
        thread_id: &str,
        objective: &str,
    ) -> Result<(), StoreError> {
        let at = now();
        with_conn!(self, conn => {
            sqlx::query(
                "INSERT INTO objectives (thread_id, objective, updated_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (thread_id) DO UPDATE SET objective = excluded.objective, \
                 updated_at = excluded.updated_at",
            )
            .bind(thread_id)
            .bind(objective)
            .bind(at)
            .execute(conn)
            .await
            .map(|r| r.rows_affected())
        })
        .context("setting the objective")?;
        self.mark(Panel::Objective);
        self.journal_mut().objective(Some(objective.to_string()));
        Ok(())
    }

    /// Removes the objective (a restore to a time before it was set).
    pub async fn clear_objective(&mut self, thread_id: &str) -> Result<(), StoreError> {
        let removed = with_conn!(self, conn => {
            sqlx::query("DELETE FROM objectives WHERE thread_id = $1")
                .bind(thread_id)
                .execute(conn)
                .await
                .map(|r| r.rows_affected())
        })
        .context("clearing the objective")?;
        if removed > 0 {
            self.mark(Panel::Objective);
            self.journal_mut().objective(None);
        }
        Ok(())
    }
}
