// Tool methods take `&self`, not `self`.
use haico::store::WorkspaceRepository;
use haico::tools::{ToolResult, workspace_tool, workspace_tools};

struct DemoTools;

#[workspace_tools]
impl DemoTools {
    #[workspace_tool(name = "list", description = "List the notes")]
    async fn list(self, _repo: &mut WorkspaceRepository) -> ToolResult {
        Ok("listed".into())
    }
}

fn main() {}
