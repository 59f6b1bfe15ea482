//! A collection with one args tool and one no-args tool; the test reads its entries.

use haico::tools::{ToolCollection, ToolError, ToolResult, workspace_tool, workspace_tools};
use haico::workspace::Edit;
use schemars::JsonSchema;
use serde::Deserialize;

struct NoteTools {
    prefix: String,
}

/// Arguments of `add_note`.
#[derive(Deserialize, JsonSchema)]
struct AddNoteArgs {
    /// The note's text.
    text: String,
}

#[workspace_tools]
impl NoteTools {
    #[workspace_tool(name = "add_note", description = "Add a note to the workspace.")]
    async fn add_note(&self, _edit: &mut Edit, args: AddNoteArgs) -> ToolResult {
        Ok(format!("{}{}", self.prefix, args.text).into())
    }

    #[workspace_tool(name = "list_notes", description = "List the notes.")]
    async fn list_notes(&self, _edit: &mut Edit) -> Result<String, ToolError> {
        Ok(self.helper())
    }

    fn helper(&self) -> String {
        format!("{}no notes yet", self.prefix)
    }
}

#[test]
fn args_and_no_args_tools_are_entries_in_order() {
    let tools = NoteTools {
        prefix: String::new(),
    };
    assert_eq!(tools.helper(), "no notes yet");

    let entries = <NoteTools as ToolCollection>::entries();
    let names: Vec<&str> = entries.iter().map(|entry| (entry.spec)().name).collect();
    assert_eq!(names, ["add_note", "list_notes"]);

    let add = (entries[0].spec)();
    assert_eq!(add.description, "Add a note to the workspace.");
    assert!(add.parameters["properties"]["text"].is_object());
    assert!(add.parameters["properties"]["action_and_reasoning"].is_object());
    let list = (entries[1].spec)();
    assert!(list.parameters["properties"]["text"].is_null());
}
