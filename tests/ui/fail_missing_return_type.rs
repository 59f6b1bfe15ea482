// Tool methods must return `ToolResult` or `Result<String, ToolError>`.
use haico::workspace::Edit;
use haico::tools::{workspace_tool, workspace_tools};

struct DemoTools;

#[workspace_tools]
impl DemoTools {
    #[workspace_tool(name = "list", description = "List the notes")]
    async fn list(&self, _edit: &mut Edit) {}
}

fn main() {}
