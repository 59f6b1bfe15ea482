// A tool that takes a `View` cannot write, so it must be declared `read_only`.
use haico::tools::{ToolResult, workspace_tool, workspace_tools};
use haico::workspace::View;

struct DemoTools;

#[workspace_tools]
impl DemoTools {
    #[workspace_tool(name = "peek", description = "Look at the plan.")]
    async fn peek(&self, _view: &mut View) -> ToolResult {
        Ok("peeked".into())
    }
}

fn main() {}
