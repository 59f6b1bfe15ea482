//! Document tools: write the shared working document in the centre panel.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolResult, workspace_tool, workspace_tools};
use crate::workspace::{Edit, rules::char_count};

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
}

/// Arguments of `append_to_document`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppendToDocumentArgs {
    /// Markdown to add at the end of the document. Include the blank line or line break you
    /// want between the existing text and this one.
    pub text: String,
}

#[workspace_tools]
impl DocumentTools {
    #[workspace_tool(
        name = "update_document",
        description = "Replace the whole body of the shared working document (and optionally its \
                       title). Use it to restructure or rewrite; to add to the end, use \
                       append_to_document instead."
    )]
    async fn update_document(&self, edit: &mut Edit, args: UpdateDocumentArgs) -> ToolResult {
        let document = edit
            .replace_document(&args.content, args.title.as_deref(), None)
            .await?;
        Ok(format!("document updated ({} chars)", char_count(&document.content)).into())
    }

    #[workspace_tool(
        name = "append_to_document",
        description = "Add text to the end of the shared working document, creating the document \
                       if there is none yet."
    )]
    async fn append_to_document(&self, edit: &mut Edit, args: AppendToDocumentArgs) -> ToolResult {
        let appended = edit.append_to_document(&args.text).await?;
        Ok(format!("appended ({} chars total)", appended.chars).into())
    }
}
