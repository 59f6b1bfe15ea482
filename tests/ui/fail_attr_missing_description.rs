// `description` is required.
use haico::workspace::Edit;
use haico::tools::{ToolResult, workspace_tool, workspace_tools};

struct DemoTools;

#[workspace_tools]
impl DemoTools {
    #[workspace_tool(name = "list")]
    async fn list(&self, _edit: &mut Edit) -> ToolResult {
        Ok("listed".into())
    }
}

fn main() {}
