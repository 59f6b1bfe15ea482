// At most one args parameter follows the workspace.
use haico::workspace::Edit;
use haico::tools::{ToolResult, workspace_tool, workspace_tools};

struct DemoTools;

#[workspace_tools]
impl DemoTools {
    #[workspace_tool(name = "list", description = "List the notes")]
    async fn list(&self, _edit: &mut Edit, _limit: u32, _offset: u32) -> ToolResult {
        Ok("listed".into())
    }
}

fn main() {}
