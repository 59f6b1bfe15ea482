// Tool names are unique within a collection.
use haico::workspace::Edit;
use haico::tools::{ToolError, ToolResult, workspace_tool, workspace_tools};

struct DemoTools;

#[workspace_tools]
impl DemoTools {
    #[workspace_tool(name = "list", description = "List the notes")]
    async fn list(&self, _edit: &mut Edit) -> ToolResult {
        Ok("listed".into())
    }

    #[workspace_tool(name = "list", description = "List the notes, newest first")]
    async fn list_newest(&self, _edit: &mut Edit) -> Result<String, ToolError> {
        Ok("listed".to_string())
    }
}

fn main() {}
