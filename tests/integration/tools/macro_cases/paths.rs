//! The attributes also work when named by path, next to other methods and attributes.

use haico::tools::{ToolCollection, ToolResult};
use haico::workspace::Edit;

pub struct PathTools;

#[haico::tools::workspace_tools]
impl PathTools {
    /// Says hello.
    #[haico::tools::workspace_tool(name = "hello", description = "Say hello.")]
    pub async fn hello(&self, _edit: &mut Edit) -> ToolResult {
        Ok("hello".into())
    }

    const GREETING: &str = "hi";
}

#[test]
fn attributes_named_by_path() {
    let _ = PathTools;
    assert_eq!(PathTools::GREETING, "hi");
    let entries = PathTools::entries();
    assert_eq!(entries.len(), 1);
    assert_eq!((entries[0].spec)().name, "hello");
}
