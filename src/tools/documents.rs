//! Document tools: write the shared working document in the centre panel.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{
    ToolError, ToolResult,
    checks::{char_count, check_length},
    workspace_tool, workspace_tools,
};
use crate::{ThreadId, store::WorkspaceRepository};

/// The longest document body, in characters, that the tools will store.
pub const MAX_DOCUMENT_CHARS: usize = 4_000_000;
/// The longest document title.
pub const MAX_TITLE_CHARS: usize = 300;

/// Writes a thread's working document.
pub struct DocumentTools {
    thread_id: ThreadId,
}

impl DocumentTools {
    /// The document tools of one thread.
    pub fn new(thread_id: ThreadId) -> Self {
        Self { thread_id }
    }
}

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
    async fn update_document(
        &self,
        repo: &mut WorkspaceRepository,
        args: UpdateDocumentArgs,
    ) -> ToolResult {
        check_length(&args.content, "content", MAX_DOCUMENT_CHARS)?;
        let title = match &args.title {
            Some(title) => {
                check_length(title, "title", MAX_TITLE_CHARS)?;
                Some(title.trim())
            }
            None => None,
        };
        let written = repo
            .upsert_document(self.thread_id.as_str(), &args.content, title)
            .await?;
        Ok(format!("document updated ({} chars)", written.chars).into())
    }

    #[workspace_tool(
        name = "append_to_document",
        description = "Add text to the end of the shared working document, creating the document \
                       if there is none yet."
    )]
    async fn append_to_document(
        &self,
        repo: &mut WorkspaceRepository,
        args: AppendToDocumentArgs,
    ) -> ToolResult {
        if args.text.is_empty() {
            return Err(ToolError::invalid(
                "`text` is empty: pass the text to append",
            ));
        }
        check_length(&args.text, "text", MAX_DOCUMENT_CHARS)?;
        let written = repo
            .append_document(self.thread_id.as_str(), &args.text)
            .await?;
        if usize::try_from(written.chars).unwrap_or(usize::MAX) > MAX_DOCUMENT_CHARS {
            return Err(ToolError::invalid(format!(
                "the document would grow past {MAX_DOCUMENT_CHARS} characters; shorten it with \
                 update_document first (this {}-character append was not applied)",
                char_count(&args.text)
            )));
        }
        Ok(format!("appended ({} chars total)", written.chars).into())
    }
}
