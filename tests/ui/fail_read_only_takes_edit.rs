// A read-only tool runs on a read snapshot: it gets a `View`, never an `Edit`.
use haico::tools::{ToolResult, workspace_tool, workspace_tools};
use haico::workspace::Edit;

struct DemoTools;

#[workspace_tools]
impl DemoTools {
    #[workspace_tool(name = "peek", read_only, description = "Look at the plan.")]
    async fn peek(&self, _edit: &mut Edit) -> ToolResult {
        Ok("peeked".into())
    }
}

fn main() {}
