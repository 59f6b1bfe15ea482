// `#[workspace_tools]` goes on an impl block, not on the struct.
use haico::tools::workspace_tools;

#[workspace_tools]
struct DemoTools;

fn main() {}
