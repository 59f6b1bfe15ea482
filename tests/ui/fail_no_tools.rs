// A `#[workspace_tools]` impl block must declare at least one tool.
use haico::tools::workspace_tools;

struct DemoTools;

#[workspace_tools]
impl DemoTools {
    fn helper(&self) -> usize {
        0
    }
}

fn main() {}
