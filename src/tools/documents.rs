//! Document tools: write the shared working document in the centre panel.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolResult, summary::nothing_changed, workspace_tool, workspace_tools};
use crate::store::Suggestion;
use crate::workspace::{
    Edit, SuggestionDraft, TextEdit, Written,
    rules::{char_count, plural},
};

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
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateDocumentArgs {
    /// The complete new body in Markdown. It replaces everything that is there now.
    pub content: String,
    /// A new title for the document. Leave it out to keep the current title.
    #[serde(default)]
    pub title: Option<String>,
    /// Set to true only to replace a long document on purpose even though most of its text
    /// goes.
    #[serde(default)]
    pub replace_all: bool,
}

/// Arguments of `append_to_document`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppendToDocumentArgs {
    /// Markdown to add at the end of the document. Include the blank line or line break you
    /// want between the existing text and this one.
    pub text: String,
}

/// One change for `edit_document`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DocumentEditInput {
    /// The exact passage to replace, copied character for character from the document as it is
    /// now (spaces, line breaks and Markdown marks included). It must occur exactly once in the
    /// document: include a few surrounding words so it cannot match anywhere else. To insert
    /// text, quote the passage next to where it goes.
    pub old_text: String,
    /// The text that takes the place of old_text (to insert, repeat old_text with the addition
    /// in it). Use an empty string to delete old_text.
    pub new_text: String,
}

/// Arguments of `edit_document`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditDocumentArgs {
    /// The changes, applied one after the other: each one sees the document as the ones before
    /// it left it. If any of them fails, none is applied.
    pub edits: Vec<DocumentEditInput>,
}

#[workspace_tools]
impl DocumentTools {
    #[workspace_tool(
        name = "update_document",
        description = "Replace the whole body of the shared working document (and optionally its \
                       title). Use it to restructure or rewrite the whole document; to change \
                       part of it, use edit_document; to add to the end, append_to_document."
    )]
    async fn update_document(&self, edit: &mut Edit, args: UpdateDocumentArgs) -> ToolResult {
        let draft = SuggestionDraft::Replace {
            content: &args.content,
            title: args.title.as_deref(),
        };
        let written = edit
            .write_or_suggest(draft, async |edit: &mut Edit| {
                edit.rewrite_document(&args.content, args.title.as_deref(), args.replace_all)
                    .await
            })
            .await?;
        Ok(match written {
            Written::Direct(rewritten) => {
                let chars = char_count(&rewritten.document.content);
                if rewritten.changed {
                    format!("document updated ({chars} chars)")
                } else {
                    nothing_changed([format!(
                        "the document already has exactly this content and title ({chars} \
                         chars)"
                    )])
                }
            }
            Written::Suggested(suggestion) => suggested(&suggestion),
        }
        .into())
    }

    #[workspace_tool(
        name = "append_to_document",
        description = "Add text to the end of the shared working document, creating the document \
                       if there is none yet."
    )]
    async fn append_to_document(&self, edit: &mut Edit, args: AppendToDocumentArgs) -> ToolResult {
        let draft = SuggestionDraft::Append { text: &args.text };
        let written = edit
            .write_or_suggest(draft, async |edit: &mut Edit| {
                edit.append_to_document(&args.text).await
            })
            .await?;
        Ok(match written {
            Written::Direct(appended) => format!("appended ({} chars total)", appended.chars),
            Written::Suggested(suggestion) => suggested(&suggestion),
        }
        .into())
    }

    #[workspace_tool(
        name = "edit_document",
        description = "Change part of the shared working document in place: each edit replaces \
                       one exact passage (old_text, copied from the document, occurring exactly \
                       once) with new_text. Prefer it over update_document to fix, reword, \
                       insert into or delete part of the document; use update_document only to \
                       rewrite the whole document."
    )]
    async fn edit_document(&self, edit: &mut Edit, args: EditDocumentArgs) -> ToolResult {
        let edits: Vec<TextEdit<'_>> = args
            .edits
            .iter()
            .map(|change| TextEdit {
                old_text: &change.old_text,
                new_text: &change.new_text,
            })
            .collect();
        let draft = SuggestionDraft::Edit { edits: &edits };
        let written = edit
            .write_or_suggest(draft, async |edit: &mut Edit| {
                edit.edit_document(&edits).await
            })
            .await?;
        let edited = match written {
            Written::Direct(edited) => edited,
            Written::Suggested(suggestion) => return Ok(suggested(&suggestion).into()),
        };
        Ok(if edited.changed {
            format!(
                "applied {} ({} chars)",
                plural(edited.edits, "edit"),
                edited.chars
            )
        } else {
            let edits = match edited.edits {
                1 => "the edit leaves".to_string(),
                n => format!("the {n} edits leave"),
            };
            nothing_changed([format!(
                "{edits} the document exactly as it was ({} chars); give new_text that differs \
                 from old_text",
                edited.chars
            )])
        }
        .into())
    }
}
