// Tool names are at most 64 characters long.
use haico::workspace::Edit;
use haico::tools::{ToolResult, workspace_tool, workspace_tools};

struct DemoTools;

#[workspace_tools]
impl DemoTools {
    #[workspace_tool(
        name = "list_every_single_note_of_the_workspace_in_the_order_they_were_added",
        description = "List the notes"
    )]
    async fn list(&self, _edit: &mut Edit) -> ToolResult {
        Ok("listed".into())
    }
}

fn main() {}
