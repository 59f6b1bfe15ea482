// `#[workspace_tool]` only works inside an impl block marked `#[workspace_tools]`.
use haico::workspace::Edit;
use haico::tools::{ToolResult, workspace_tool};

struct DemoTools;

impl DemoTools {
    #[workspace_tool(name = "list", description = "List the notes")]
    async fn list(&self, _edit: &mut Edit) -> ToolResult {
        Ok("listed".into())
    }
}

fn main() {}
