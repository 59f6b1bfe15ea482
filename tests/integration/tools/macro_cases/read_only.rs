//! A read-only tool takes a view, a writing tool an edit; the entries say which is which.

use haico::tools::{Invoke, ToolCollection, ToolResult, workspace_tool, workspace_tools};
use haico::workspace::{Edit, View};

struct MixedTools;

#[workspace_tools]
impl MixedTools {
    #[workspace_tool(name = "count", read_only, description = "Count the plan's steps.")]
    async fn count(&self, view: &mut View) -> ToolResult {
        Ok(format!("{} steps", view.plan_len().await?).into())
    }

    #[workspace_tool(name = "aim", description = "Set the objective.")]
    async fn aim(&self, edit: &mut Edit) -> ToolResult {
        Ok(edit.objective().set("A goal").await?.objective.into())
    }
}

#[test]
fn read_only_and_writing_tools_get_their_handles() {
    let entries = <MixedTools as ToolCollection>::entries();
    assert!(matches!(entries[0].invoke, Invoke::Read(_)));
    assert!(matches!(entries[1].invoke, Invoke::Write(_)));
}
