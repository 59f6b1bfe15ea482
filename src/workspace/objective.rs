//! The objective: the agent's one-line understanding of what the user wants. Either path sets
//! it under the same rule: one line (runs of whitespace, line breaks included, become single
//! spaces), not empty, at most [`MAX_OBJECTIVE_CHARS`].

use super::{
    Edit, Source, WorkspaceError, Workspaces,
    rules::{one_line, require_text},
};
use crate::ThreadId;

/// The longest objective, in characters.
pub const MAX_OBJECTIVE_CHARS: usize = 500;

/// The objective as it is stored: one line, checked.
pub fn normalize_objective(raw: &str) -> Result<String, WorkspaceError> {
    let line = one_line(raw);
    Ok(require_text(&line, "objective", MAX_OBJECTIVE_CHARS)?.to_string())
}

impl Edit {
    /// Sets or replaces the objective; returns it as stored.
    pub async fn set_objective(&mut self, raw: &str) -> Result<String, WorkspaceError> {
        let objective = normalize_objective(raw)?;
        let thread = self.thread_id();
        self.repo()
            .objectives()
            .set_objective(&thread, &objective)
            .await?;
        Ok(objective)
    }
}

impl Workspaces {
    /// A person sets the objective; returns it as stored.
    pub async fn put_objective(
        &self,
        thread: &ThreadId,
        raw: &str,
    ) -> Result<String, WorkspaceError> {
        let objective = normalize_objective(raw)?;
        let mut edit = self.edit(thread, Source::User).await?;
        let outcome = edit.set_objective(&objective).await;
        self.settle(edit, outcome, |_| "set the objective".to_string())
            .await
    }

    /// The objective, if one is set.
    pub async fn objective(&self, thread: &ThreadId) -> Result<Option<String>, WorkspaceError> {
        {
            let mut view = self.view(thread).await?;
            let found = view.objective().await;
            view.settle(found).await
        }
    }
}
