//! A passage of the document a chat message is about: its text and where it sits, in code
//! points of one version's body, and how it is found in the body as it is now.

use serde::{Deserialize, Serialize};

use crate::workspace::focus::{self, Focus};
use crate::{
    workspace::document::empty_document, workspace::error::WorkspaceError,
    workspace::history::replay::follow_offset, workspace::view::View,
};
use haico_store::ThreadId;

/// A selected passage: `text` is the body's code points `start..end` at `version`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Selection {
    /// The selected text, exactly as it reads in the document.
    pub text: String,
    /// Where it starts, in code points from the start of the body.
    pub start: i64,
    /// Where it ends (exclusive), in code points.
    pub end: i64,
    /// The document version the offsets refer to.
    pub version: i64,
}

/// The longest passage a message may be about, in code points.
pub const MAX_SELECTION_CHARS: usize = 20_000;

/// Checks the shape of `selection`: a passage that is not empty, not too long, and whose
/// offsets span exactly its text. Breaking any of these is [`WorkspaceError::Invalid`] (400).
fn checked_shape(selection: &Selection) -> Result<(usize, usize), WorkspaceError> {
    let Selection {
        text,
        start,
        end,
        version,
    } = selection;
    if text.is_empty() {
        return Err(WorkspaceError::invalid(
            "`selection.text` is empty: select the passage to ask about",
        ));
    }
    if *start < 0 || *end <= *start || *version < 0 {
        return Err(WorkspaceError::invalid(format!(
            "`selection` spans {start}..{end} of version {version}: offsets count code points \
             from 0, with start before end"
        )));
    }
    let len = text.chars().count();
    if len > MAX_SELECTION_CHARS {
        return Err(WorkspaceError::invalid(format!(
            "the selection is {len} characters long; the limit is {MAX_SELECTION_CHARS}"
        )));
    }
    if usize::try_from(end - start).ok() != Some(len) {
        return Err(WorkspaceError::invalid(format!(
            "`selection` spans {} code points but its text has {len}",
            end - start
        )));
    }
    Ok((usize::try_from(*start).unwrap_or(usize::MAX), len))
}

/// Whether `body` reads `text` at code points `start..start + len`.
fn reads_at(body: &str, start: usize, len: usize, text: &str) -> bool {
    let from = focus::byte_at(body, start);
    body[from..].chars().take(len).eq(text.chars())
}

impl View {
    /// Finds the passage `selection` names in the document as it is now. A malformed selection
    /// is [`WorkspaceError::Invalid`] (400). Otherwise the text must read at its offsets in the
    /// version it names — the current one, or an older one replayed from the history — and
    /// is then found in the current body by text (its only occurrence, or the one nearest to
    /// where the person's later edits moved its offsets); when it no longer occurs, or the
    /// version never read that text, it is [`WorkspaceError::Mismatch`] (422).
    pub async fn focus_for(&mut self, selection: &Selection) -> Result<Focus, WorkspaceError> {
        let (start, len) = checked_shape(selection)?;
        let version = selection.version;
        let document = self.document().await?.unwrap_or_else(empty_document);
        if version > document.version {
            return Err(WorkspaceError::Mismatch(format!(
                "the selection names version {version} of the document, which is only at \
                 version {}",
                document.version
            )));
        }
        let hint = if version == document.version {
            if !reads_at(&document.content, start, len, &selection.text) {
                return Err(WorkspaceError::Mismatch(format!(
                    "the selected text is not in the document: version {version} does not read \
                     that text at {}..{}; select it again",
                    selection.start, selection.end
                )));
            }
            start
        } else {
            let thread = self.thread.clone();
            let text = selection.text.as_str();
            follow_offset(&mut self.repo, &thread, version, start, |then| {
                reads_at(then, start, len, text)
            })
            .await?
            .ok_or_else(|| {
                WorkspaceError::Mismatch(format!(
                    "the selected text is not in the document: version {version} does not read \
                     that text at {}..{}; select it again",
                    selection.start, selection.end
                ))
            })?
        };
        let focus = Focus {
            text: selection.text.clone(),
            start: hint,
            version: document.version,
        };
        let Some(span) = focus.locate(&document.content) else {
            return Err(WorkspaceError::Mismatch(format!(
                "the selected passage is no longer in the document: it was changed after \
                 version {version} (the document is at version {} now); select it again",
                document.version
            )));
        };
        Ok(Focus {
            start: span.start,
            ..focus
        })
    }
}

impl crate::workspace::service::Workspaces {
    /// The passage `selection` names, found in `thread`'s document as it is now (see
    /// [`View::focus_for`]).
    pub async fn focus_for(
        &self,
        thread: &ThreadId,
        selection: &Selection,
    ) -> Result<Focus, WorkspaceError> {
        let mut view = self.view(thread).await?;
        let found = view.focus_for(selection).await;
        view.settle(found).await
    }
}

/// The message the agent reads for `message` about the passage `focus`: the passage quoted first, with
/// where it sits, so the model knows what "this" refers to and can quote it in an edit.
pub fn message_about(focus: &Focus, message: &str) -> String {
    let quoted: String = focus
        .text
        .lines()
        .map(|line| format!("> {line}\n"))
        .collect();
    format!(
        "About this passage of the document (characters {}-{} of version {}):\n\n{quoted}\n{message}",
        focus.start,
        focus.start + focus.chars(),
        focus.version
    )
}
