// A bare `#[workspace_tool]` has neither a name nor a description.
use haico::workspace::Edit;
use haico::tools::{ToolResult, workspace_tool, workspace_tools};

struct DemoTools;

#[workspace_tools]
impl DemoTools {
    #[workspace_tool]
    async fn list(&self, _edit: &mut Edit) -> ToolResult {
        Ok("listed".into())
    }
}

fn main() {}
