//! Objective tool: the agent's one-line understanding of what the user wants.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolResult, checks::require_text, workspace_tool, workspace_tools};
use crate::{ThreadId, store::WorkspaceRepository};

/// The longest objective, in characters.
pub const MAX_OBJECTIVE_CHARS: usize = 500;

/// Keeps a thread's objective current.
pub struct ObjectiveTools {
    thread_id: ThreadId,
}

impl ObjectiveTools {
    /// The objective tools of one thread.
    pub fn new(thread_id: ThreadId) -> Self {
        Self { thread_id }
    }
}

/// Arguments of `set_objective`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetObjectiveArgs {
    /// The user's goal as you currently understand it, in one line.
    pub objective: String,
}

#[workspace_tools]
impl ObjectiveTools {
    #[workspace_tool(
        name = "set_objective",
        description = "Set or replace the one-line objective: your current understanding of what \
                       the user is trying to achieve. Update it whenever that understanding changes."
    )]
    async fn set_objective(
        &self,
        repo: &mut WorkspaceRepository,
        args: SetObjectiveArgs,
    ) -> ToolResult {
        // One line: runs of whitespace, line breaks included, become single spaces.
        let line = args
            .objective
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let objective = require_text(&line, "objective", MAX_OBJECTIVE_CHARS)?;
        repo.set_objective(self.thread_id.as_str(), objective)
            .await?;
        Ok(format!("objective set: {objective}").into())
    }
}
