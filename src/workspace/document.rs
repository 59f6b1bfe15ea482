//! The working document: a title and a Markdown body, one per thread, with a version that
//! every write bumps so an editor can tell that someone else wrote meanwhile.
//!
//! Rules for both paths: the body (which may be empty) has at most [`MAX_DOCUMENT_CHARS`]
//! characters; a title is trimmed, then at most [`MAX_DOCUMENT_TITLE_CHARS`]; a write without
//! a title keeps the current one. A write may name the version it expects (0: "there is no
//! document yet"); the check is part of the SQL write, so it holds under concurrent writers.

use super::{
    Edit, Source, WorkspaceError, Workspaces,
    rules::{char_count, check_length},
};
use crate::{ThreadId, store::Document};

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
fn checked_title(title: Option<&str>) -> Result<Option<&str>, WorkspaceError> {
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
fn check_replacement(
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

/// The size of the body after an append, and its new version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appended {
    /// Characters in the whole body now.
    pub chars: usize,
    /// The new version.
    pub version: i64,
}

impl Edit {
    /// Replaces the body (and the title, when one is given). With `expected_version` the
    /// write happens only while the document is still at that version; otherwise it fails
    /// with [`WorkspaceError::StaleDocument`] carrying the current document.
    pub async fn replace_document(
        &mut self,
        content: &str,
        title: Option<&str>,
        expected_version: Option<i64>,
    ) -> Result<Document, WorkspaceError> {
        check_replacement(content, title, expected_version)?;
        let title = checked_title(title)?;
        let thread = self.thread_str();
        match self
            .repo()
            .put_document(&thread, content, title, expected_version)
            .await?
        {
            Some(document) => Ok(document),
            None => {
                let current = self
                    .repo()
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

    /// Appends `text` to the body, creating the document when there is none. The text must
    /// not be empty, and the body must stay within [`MAX_DOCUMENT_CHARS`].
    pub async fn append_to_document(&mut self, text: &str) -> Result<Appended, WorkspaceError> {
        if text.is_empty() {
            return Err(WorkspaceError::invalid(
                "`text` is empty: pass the text to append",
            ));
        }
        check_length(text, "text", MAX_DOCUMENT_CHARS)?;
        let thread = self.thread_str();
        let written = self.repo().append_document(&thread, text).await?;
        let chars = usize::try_from(written.chars).unwrap_or(usize::MAX);
        if chars > MAX_DOCUMENT_CHARS {
            return Err(WorkspaceError::invalid(format!(
                "the document would grow past {MAX_DOCUMENT_CHARS} characters; shorten it with \
                 update_document first (this {}-character append was not applied)",
                char_count(text)
            )));
        }
        Ok(Appended {
            chars,
            version: written.version,
        })
    }
}

impl Workspaces {
    /// A person replaces the document (see [`Edit::replace_document`]).
    pub async fn put_document(
        &self,
        thread: &ThreadId,
        content: &str,
        title: Option<&str>,
        expected_version: Option<i64>,
    ) -> Result<Document, WorkspaceError> {
        check_replacement(content, title, expected_version)?;
        let mut edit = self.edit(thread, Source::User).await?;
        let outcome = edit
            .replace_document(content, title, expected_version)
            .await;
        self.settle(edit, outcome, |document| {
            format!("edited the document (version {})", document.version)
        })
        .await
    }

    /// The document; an empty one at version 0 when none was written yet.
    pub async fn document(&self, thread: &ThreadId) -> Result<Document, WorkspaceError> {
        let document = {
            let mut view = self.view(thread).await?;
            let found = view.document().await;
            view.settle(found).await
        }?;
        Ok(document.unwrap_or_else(empty_document))
    }
}
