// A collection's tool table is a `static`, so the impl cannot be generic.
use std::marker::PhantomData;

use haico::workspace::Edit;
use haico::tools::{ToolResult, workspace_tool, workspace_tools};

struct DemoTools<T>(PhantomData<T>);

#[workspace_tools]
impl<T: Send + Sync + 'static> DemoTools<T> {
    #[workspace_tool(name = "list", description = "List the notes")]
    async fn list(&self, _edit: &mut Edit) -> ToolResult {
        Ok("listed".into())
    }
}

fn main() {}
