// Tool methods must be `async`.
use haico::store::WorkspaceRepository;
use haico::tools::{ToolResult, workspace_tool, workspace_tools};

struct DemoTools;

#[workspace_tools]
impl DemoTools {
    #[workspace_tool(name = "list", description = "List the notes")]
    fn list(&self, _repo: &mut WorkspaceRepository) -> ToolResult {
        Ok("listed".into())
    }
}

fn main() {}
