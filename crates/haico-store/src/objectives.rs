//! The one-line objective of a thread.

use super::repository::repository;
use crate::panels::Panel;
use crate::thread_id::ThreadId;
use crate::{error::Context, error::StoreError, query::params, repository::now};

repository!(
    /// The objective panel.
    ObjectivesRepo,
    objectives
);

impl ObjectivesRepo<'_> {
    /// The objective, if one was set.
    pub async fn get_objective(
        &mut self,
        thread_id: &ThreadId,
    ) -> Result<Option<String>, StoreError> {
        let row: Option<(String,)> = self
            .fetch_optional(
                "SELECT objective FROM objectives WHERE thread_id = $1",
                &params![thread_id],
            )
            .await
            .context("reading the objective")?;
        Ok(row.map(|(objective,)| objective))
    }

    /// Sets or replaces the objective.
    pub async fn set_objective(
        &mut self,
        thread_id: &ThreadId,
        objective: &str,
    ) -> Result<(), StoreError> {
        self.execute(
            "INSERT INTO objectives (thread_id, objective, updated_at) VALUES ($1, $2, $3) \
             ON CONFLICT (thread_id) DO UPDATE SET objective = excluded.objective, \
             updated_at = excluded.updated_at",
            &params![thread_id, objective, now()],
        )
        .await
        .context("setting the objective")?;
        self.mark(Panel::Objective);
        self.journal_mut().objective(Some(objective.to_string()));
        Ok(())
    }

    /// Removes the objective (a restore to a time before it was set).
    pub async fn clear_objective(&mut self, thread_id: &ThreadId) -> Result<(), StoreError> {
        let removed = self
            .execute(
                "DELETE FROM objectives WHERE thread_id = $1",
                &params![thread_id],
            )
            .await
            .context("clearing the objective")?;
        if removed > 0 {
            self.mark(Panel::Objective);
            self.journal_mut().objective(None);
        }
        Ok(())
    }
}
