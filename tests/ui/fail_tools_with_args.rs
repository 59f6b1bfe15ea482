// `#[workspace_tools]` takes no arguments; names and descriptions go on each method.
use haico::workspace::Edit;
use haico::tools::{ToolResult, workspace_tool, workspace_tools};

struct DemoTools;

#[workspace_tools(name = "demo")]
impl DemoTools {
    #[workspace_tool(name = "list", description = "List the notes")]
    async fn list(&self, _edit: &mut Edit) -> ToolResult {
        Ok("listed".into())
    }
}

fn main() {}
