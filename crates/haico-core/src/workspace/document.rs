//! The working document: a title and a Markdown body, one per thread, with a version that
//! every write bumps so an editor can tell that someone else wrote meanwhile.
//!
//! Rules for both paths: the body (which may be empty) has at most [`MAX_DOCUMENT_CHARS`]
//! characters; a title is trimmed, then at most [`MAX_DOCUMENT_TITLE_CHARS`]; a write without
//! a title keeps the current one. A write may name the version it expects (0: "there is no
//! document yet"); the check is part of the SQL write, so it holds under concurrent writers.
//!
//! What the agent's document tools ask for is a [`DocumentChange`] ([`change`]): checked and
//! applied there, written here ([`DocumentEdit::change`]) or stored as a suggestion
//! (`suggestions/agent.rs`).
//!
//! An agent's whole rewrite ([`Edit::rewrite_document`]) must not silently drop most of a
//! substantial body ([`loss`]), and one that changes nothing writes nothing.

use crate::{
    workspace::announce::Source, workspace::error::WorkspaceError, workspace::rules::char_count,
    workspace::rules::check_length,
};
use crate::{workspace::handles::DocumentEdit, workspace::handles::ThreadDocument};
use haico_store::{Document, DocumentMode};

pub mod change;
pub mod loss;

pub use change::{DocumentChange, TextEdit};

/// The longest document body, in characters.
pub const MAX_DOCUMENT_CHARS: usize = 4_000_000;
/// The longest document title, in characters.
pub const MAX_DOCUMENT_TITLE_CHARS: usize = 300;

/// What a thread without a document shows: empty, version 0.
pub fn empty_document() -> Document {
    Document {
        title: String::new(),
        content: String::new(),
        version: 0,
    }
}

/// A title as stored: trimmed, within the limit; `None` keeps the current title.
pub(super) fn checked_title(title: Option<&str>) -> Result<Option<&str>, WorkspaceError> {
    match title {
        Some(title) => {
            let title = title.trim();
            check_length(title, "title", MAX_DOCUMENT_TITLE_CHARS)?;
            Ok(Some(title))
        }
        None => Ok(None),
    }
}

/// Checks a whole write before it touches the store.
pub(super) fn check_replacement(
    content: &str,
    title: Option<&str>,
    expected_version: Option<i64>,
) -> Result<(), WorkspaceError> {
    check_length(content, "content", MAX_DOCUMENT_CHARS)?;
    checked_title(title)?;
    if let Some(expected) = expected_version
        && expected < 0
    {
        return Err(WorkspaceError::invalid(format!(
            "`expected_version` is {expected}: versions start at 0 (no document yet)"
        )));
    }
    Ok(())
}

/// What the agent's direct write of a [`DocumentChange`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocumentChanged {
    /// Characters in the whole body now.
    pub chars: usize,
    /// The version now.
    pub version: i64,
    /// Whether the document changed. A rewrite to the body (and title) it already has, or
    /// edits whose new text equals their old text, leave it as it was; then nothing is written,
    /// so no revision is made. An append always changes it.
    pub changed: bool,
}

impl DocumentEdit<'_> {
    /// Replaces the body (and the title, when one is given). With `expected_version` the
    /// write happens only while the document is still at that version; otherwise it fails
    /// with [`WorkspaceError::StaleDocument`] carrying the current document.
    pub async fn replace(
        &mut self,
        content: &str,
        title: Option<&str>,
        expected_version: Option<i64>,
    ) -> Result<Document, WorkspaceError> {
        check_replacement(content, title, expected_version)?;
        let title = checked_title(title)?;
        let thread = self.edit.thread_id();
        match self
            .edit
            .repo()
            .documents()
            .put_document(&thread, content, title, expected_version)
            .await?
        {
            Some(document) => Ok(document),
            None => {
                let current = self
                    .edit
                    .repo()
                    .documents()
                    .get_document(&thread)
                    .await?
                    .unwrap_or_else(empty_document);
                Err(WorkspaceError::StaleDocument {
                    expected: expected_version.unwrap_or_default(),
                    current,
                })
            }
        }
    }

    /// The agent's direct write of `change` (its document tools in `direct` mode): checked
    /// ([`DocumentChange::check`]), then written.
    ///
    /// - A whole rewrite that would drop most of a substantial body is refused
    ///   ([`loss::check_rewrite`]) unless `replace_all` is set, so a model that answers a small
    ///   correction with a fragment cannot wipe the person's text; with it, the rewrite is
    ///   written as asked. The row is held from the read to the write.
    /// - An append creates the document when there is none; the store adds the text to the
    ///   body in the statement that writes it, so the body is not read first.
    /// - Edits apply in place, all or none, to the document as it is (which must have text to
    ///   edit); the row is held from the read to the write.
    ///
    /// The body must keep within [`MAX_DOCUMENT_CHARS`]. A change that leaves the body and
    /// title as they are writes nothing. Every write goes through the store like any other, so
    /// the version, the history and the announcement are those of any other write.
    pub async fn change(
        &mut self,
        change: &DocumentChange<'_>,
        replace_all: bool,
    ) -> Result<DocumentChanged, WorkspaceError> {
        change.check()?;
        let thread = self.edit.thread_id();
        match change {
            DocumentChange::Replace { body, .. } => {
                let title = change.title();
                if let Some(current) = self
                    .edit
                    .repo()
                    .documents()
                    .document_for_edit(&thread)
                    .await?
                {
                    let same_title = title.is_none_or(|title| title == current.title);
                    if current.content == *body && same_title {
                        return Ok(DocumentChanged {
                            chars: char_count(&current.content),
                            version: current.version,
                            changed: false,
                        });
                    }
                    if !replace_all {
                        loss::check_rewrite(&current.content, body)?;
                    }
                }
                let document = self.edit.document().replace(body, title, None).await?;
                Ok(DocumentChanged {
                    chars: char_count(&document.content),
                    version: document.version,
                    changed: true,
                })
            }
            DocumentChange::Append { text } => {
                let written = self
                    .edit
                    .repo()
                    .documents()
                    .append_document(&thread, text)
                    .await?;
                let chars = usize::try_from(written.chars).unwrap_or(usize::MAX);
                change.check_size(chars, DocumentMode::Direct)?;
                Ok(DocumentChanged {
                    chars,
                    version: written.version,
                    changed: true,
                })
            }
            DocumentChange::Edits(_) => {
                let document = self
                    .edit
                    .repo()
                    .documents()
                    .document_for_edit(&thread)
                    .await?;
                change.check_target(document.as_ref(), DocumentMode::Direct)?;
                let document = document.unwrap_or_else(empty_document);
                let content = change.applied_to(&document.content)?;
                let chars = char_count(&content);
                change.check_size(chars, DocumentMode::Direct)?;
                if content == document.content {
                    return Ok(DocumentChanged {
                        chars,
                        version: document.version,
                        changed: false,
                    });
                }
                let written = self.replace(&content, None, Some(document.version)).await?;
                Ok(DocumentChanged {
                    chars,
                    version: written.version,
                    changed: true,
                })
            }
        }
    }

    /// Appends `text` to the body as the agent's `append_to_document` does in direct mode
    /// (see [`DocumentEdit::change`]).
    pub async fn append(&mut self, text: &str) -> Result<DocumentChanged, WorkspaceError> {
        let change = DocumentChange::Append { text: text.into() };
        self.edit.document().change(&change, false).await
    }
}

impl ThreadDocument<'_> {
    /// A person replaces the document (see [`DocumentEdit::replace`]).
    pub async fn put(
        &self,
        content: &str,
        title: Option<&str>,
        expected_version: Option<i64>,
    ) -> Result<Document, WorkspaceError> {
        check_replacement(content, title, expected_version)?;
        let mut edit = self.workspaces.edit(self.thread, Source::User).await?;
        let outcome = edit
            .document()
            .replace(content, title, expected_version)
            .await;
        self.workspaces
            .settle(edit, outcome, |document| {
                format!("edited the document (version {})", document.version)
            })
            .await
    }

    /// The document; an empty one at version 0 when none was written yet.
    pub async fn get(&self) -> Result<Document, WorkspaceError> {
        let document = {
            let mut view = self.workspaces.view(self.thread).await?;
            let found = view.document().await;
            view.settle(found).await
        }?;
        Ok(document.unwrap_or_else(empty_document))
    }
}
