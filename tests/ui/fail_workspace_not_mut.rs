// The workspace parameter is `&mut Edit`.
use haico::workspace::Edit;
use haico::tools::{ToolResult, workspace_tool, workspace_tools};

struct DemoTools;

#[workspace_tools]
impl DemoTools {
    #[workspace_tool(name = "list", description = "List the notes")]
    async fn list(&self, _edit: &Edit) -> ToolResult {
        Ok("listed".into())
    }
}

fn main() {}
