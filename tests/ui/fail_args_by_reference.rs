// The args struct is taken by value: it is deserialized from the model's JSON.
use haico::workspace::Edit;
use haico::tools::{ToolResult, workspace_tool, workspace_tools};

struct DemoTools;

#[workspace_tools]
impl DemoTools {
    #[workspace_tool(name = "list", description = "List the notes")]
    async fn list(&self, _edit: &mut Edit, _args: &String) -> ToolResult {
        Ok("listed".into())
    }
}

fn main() {}
