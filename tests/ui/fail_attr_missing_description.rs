// `description` is required.
use haico::store::WorkspaceRepository;
use haico::tools::{ToolResult, workspace_tool, workspace_tools};

struct DemoTools;

#[workspace_tools]
impl DemoTools {
    #[workspace_tool(name = "list")]
    async fn list(&self, _repo: &mut WorkspaceRepository) -> ToolResult {
        Ok("listed".into())
    }
}

fn main() {}
