// Every tool receives its workspace (an edit, or a view) after `&self`.
use haico::tools::{ToolResult, workspace_tool, workspace_tools};

struct DemoTools;

#[workspace_tools]
impl DemoTools {
    #[workspace_tool(name = "list", description = "List the notes")]
    async fn list(&self) -> ToolResult {
        Ok("listed".into())
    }
}

fn main() {}
