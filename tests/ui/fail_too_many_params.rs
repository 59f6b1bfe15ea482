// At most one args parameter follows the repository.
use haico::store::WorkspaceRepository;
use haico::tools::{ToolResult, workspace_tool, workspace_tools};

struct DemoTools;

#[workspace_tools]
impl DemoTools {
    #[workspace_tool(name = "list", description = "List the notes")]
    async fn list(&self, _repo: &mut WorkspaceRepository, _limit: u32, _offset: u32) -> ToolResult {
        Ok("listed".into())
    }
}

fn main() {}
