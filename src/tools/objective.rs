//! Objective tool: the agent's one-line understanding of what the user wants.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::{tools::output::ToolResult, tools::summary::nothing_changed};

use haico_core::{workspace::Edit, workspace::MAX_OBJECTIVE_CHARS};
use haico_macros::{workspace_tool, workspace_tools};

/// Keeps the objective current.
pub struct ObjectiveTools;

/// Arguments of `set_objective`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetObjectiveArgs {
    /// The user's goal as you understand it now, in one line.
    #[schemars(length(min = 1, max = MAX_OBJECTIVE_CHARS))]
    pub objective: String,
}

#[workspace_tools]
impl ObjectiveTools {
    #[workspace_tool(
        name = "set_objective",
        description = "Set the one-line objective: what the user wants to achieve, as you \
                       understand it now."
    )]
    async fn set_objective(&self, edit: &mut Edit, args: SetObjectiveArgs) -> ToolResult {
        let set = edit.objective().set(&args.objective).await?;
        Ok(if set.changed {
            format!("objective set: {}", set.objective)
        } else {
            nothing_changed([format!("the objective already reads \"{}\"", set.objective)])
        }
        .into())
    }
}
