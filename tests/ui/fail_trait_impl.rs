// `#[workspace_tools]` goes on an inherent impl block, not a trait impl.
use haico::workspace::Edit;
use haico::tools::{ToolResult, workspace_tool, workspace_tools};

struct DemoTools;

trait Listing {
    async fn list(&self, edit: &mut Edit) -> ToolResult;
}

#[workspace_tools]
impl Listing for DemoTools {
    #[workspace_tool(name = "list", description = "List the notes")]
    async fn list(&self, _edit: &mut Edit) -> ToolResult {
        Ok("listed".into())
    }
}

fn main() {}
