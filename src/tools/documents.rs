//! Document tools: write the shared working document in the centre panel.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::{tools::output::ToolResult, tools::summary::nothing_changed};

use haico_core::{
    workspace::DocumentChange, workspace::Edit, workspace::MAX_DOCUMENT_TITLE_CHARS,
    workspace::TextEdit, workspace::Written, workspace::rules::MAX_BATCH, workspace::rules::plural,
};
use haico_macros::{workspace_tool, workspace_tools};
use haico_store::Suggestion;

/// The summary of a suggestion stored in place of a write.
fn suggested(suggestion: &Suggestion) -> String {
    format!(
        "suggested #{}: the document is unchanged until the person accepts it (the thread is \
         in suggest mode)",
        suggestion.id
    )
}

/// Writes a thread's working document.
pub struct DocumentTools;

/// Arguments of `update_document`.
///
/// The document's own texts (`content`, `text`, `old_text`, `new_text`) carry no `maxLength`:
/// their limit, [`MAX_DOCUMENT_CHARS`](crate::workspace::MAX_DOCUMENT_CHARS), is far above what a grammar can bound
/// ([`MAX_SCHEMA_BOUND`](super::MAX_SCHEMA_BOUND)); the workspace enforces it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateDocumentArgs {
    /// The complete new document in Markdown.
    pub content: String,
    /// A new title; leave it out to keep the current one.
    #[serde(default)]
    #[schemars(length(max = MAX_DOCUMENT_TITLE_CHARS))]
    pub title: Option<String>,
    /// True only to replace a long document on purpose although most of its text goes.
    #[serde(default)]
    pub replace_all: bool,
}

/// Arguments of `append_to_document`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppendToDocumentArgs {
    /// Markdown to add at the end; start it with the line break it needs.
    #[schemars(length(min = 1))]
    pub text: String,
}

/// One change for `edit_document`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DocumentEditInput {
    /// The exact passage to replace, copied from the document; it must occur exactly once.
    #[schemars(length(min = 1))]
    pub old_text: String,
    /// The text that replaces old_text; empty to delete it.
    pub new_text: String,
}

/// Arguments of `edit_document`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditDocumentArgs {
    /// The changes, applied in order; if one fails, none is applied.
    #[schemars(length(min = 1, max = MAX_BATCH))]
    pub edits: Vec<DocumentEditInput>,
}

#[workspace_tools]
impl DocumentTools {
    #[workspace_tool(
        name = "update_document",
        description = "Replace the document's whole text (never the objective, plan or \
                       preferences). To change part of it use edit_document; to add at the end, \
                       append_to_document."
    )]
    async fn update_document(&self, edit: &mut Edit, args: UpdateDocumentArgs) -> ToolResult {
        let change = DocumentChange::Replace {
            body: &args.content,
            title: args.title.as_deref(),
            replaces: None,
        };
        Ok(match edit
            .document()
            .write_or_suggest(&change, args.replace_all)
            .await?
        {
            Written::Direct(written) if written.changed => {
                format!("document updated ({} chars)", written.chars)
            }
            Written::Direct(written) => nothing_changed([format!(
                "the document already has exactly this content and title ({} chars)",
                written.chars
            )]),
            Written::Suggested(suggestion) => suggested(&suggestion),
        }
        .into())
    }

    #[workspace_tool(
        name = "append_to_document",
        description = "Add Markdown at the end of the document (creating it if there is none)."
    )]
    async fn append_to_document(&self, edit: &mut Edit, args: AppendToDocumentArgs) -> ToolResult {
        let change = DocumentChange::Append {
            text: args.text.as_str().into(),
        };
        Ok(
            match edit.document().write_or_suggest(&change, false).await? {
                Written::Direct(written) => format!("appended ({} chars total)", written.chars),
                Written::Suggested(suggestion) => suggested(&suggestion),
            }
            .into(),
        )
    }

    #[workspace_tool(
        name = "edit_document",
        description = "Change parts of the document in place, each edit replacing one exact \
                       passage (old_text) with new_text: the tool for fixes and small changes."
    )]
    async fn edit_document(&self, edit: &mut Edit, args: EditDocumentArgs) -> ToolResult {
        let change = DocumentChange::Edits(
            args.edits
                .iter()
                .map(|change| TextEdit {
                    old_text: &change.old_text,
                    new_text: &change.new_text,
                })
                .collect(),
        );
        let edits = args.edits.len();
        Ok(
            match edit.document().write_or_suggest(&change, false).await? {
                Written::Direct(written) if written.changed => {
                    format!(
                        "applied {} ({} chars)",
                        plural(edits, "edit"),
                        written.chars
                    )
                }
                Written::Direct(written) => {
                    let edits = match edits {
                        1 => "the edit leaves".to_string(),
                        n => format!("the {n} edits leave"),
                    };
                    nothing_changed([format!(
                        "{edits} the document exactly as it was ({} chars); give new_text that \
                     differs from old_text",
                        written.chars
                    )])
                }
                Written::Suggested(suggestion) => suggested(&suggestion),
            }
            .into(),
        )
    }
}
