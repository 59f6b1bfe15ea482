//! The objective: the agent's one-line understanding of what the user wants. Either path sets
//! it under the same rule: one line (runs of whitespace, line breaks included, become single
//! spaces), not empty, at most [`MAX_OBJECTIVE_CHARS`]. Setting the objective it already has
//! writes nothing, so it makes no revision and the caller can say that nothing changed.

use crate::{
    workspace::announce::Source, workspace::error::WorkspaceError, workspace::rules::one_line,
    workspace::rules::require_text,
};
use crate::{workspace::handles::ObjectiveEdit, workspace::handles::ThreadObjective};

/// The longest objective, in characters.
pub const MAX_OBJECTIVE_CHARS: usize = 500;

/// The objective as it is stored: one line, checked.
pub fn normalize_objective(raw: &str) -> Result<String, WorkspaceError> {
    let line = one_line(raw);
    Ok(require_text(&line, "objective", MAX_OBJECTIVE_CHARS)?.to_string())
}

/// What setting the objective did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectiveSet {
    /// The objective as stored (one line, trimmed).
    pub objective: String,
    /// Whether it differs from the one before; when not, nothing was written.
    pub changed: bool,
}

impl ObjectiveEdit<'_> {
    /// Sets or replaces the objective; returns it as stored, and whether it changed. The
    /// objective it already has is not written again.
    pub async fn set(&mut self, raw: &str) -> Result<ObjectiveSet, WorkspaceError> {
        let objective = normalize_objective(raw)?;
        let thread = self.edit.thread_id();
        let current = self.edit.repo().objectives().get_objective(&thread).await?;
        if current.as_deref() == Some(objective.as_str()) {
            return Ok(ObjectiveSet {
                objective,
                changed: false,
            });
        }
        self.edit
            .repo()
            .objectives()
            .set_objective(&thread, &objective)
            .await?;
        Ok(ObjectiveSet {
            objective,
            changed: true,
        })
    }
}

impl ThreadObjective<'_> {
    /// A person sets the objective; returns it as stored.
    pub async fn put(&self, raw: &str) -> Result<String, WorkspaceError> {
        let objective = normalize_objective(raw)?;
        let mut edit = self.workspaces.edit(self.thread, Source::User).await?;
        let outcome = edit.objective().set(&objective).await;
        self.workspaces
            .settle(edit, outcome, |_| "set the objective".to_string())
            .await
            .map(|set| set.objective)
    }

    /// The objective, if one is set.
    pub async fn get(&self) -> Result<Option<String>, WorkspaceError> {
        {
            let mut view = self.workspaces.view(self.thread).await?;
            let found = view.objective().await;
            view.settle(found).await
        }
    }
}
