// Tool names are `[a-z0-9_]`, as LLM providers require.
use haico::workspace::Edit;
use haico::tools::{ToolResult, workspace_tool, workspace_tools};

struct DemoTools;

#[workspace_tools]
impl DemoTools {
    #[workspace_tool(name = "List-Notes", description = "List the notes")]
    async fn list(&self, _edit: &mut Edit) -> ToolResult {
        Ok("listed".into())
    }
}

fn main() {}
