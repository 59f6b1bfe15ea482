//! A passage of the document a chat message is about: its text and where it sits, in code
//! points of one version's body.

use serde::{Deserialize, Serialize};

use crate::store::Document;
use crate::workspace::WorkspaceError;

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

/// Checks `selection` against `document` (the current one). A malformed selection is
/// [`WorkspaceError::Invalid`] (400); one whose text is not at its offsets is
/// [`WorkspaceError::Mismatch`] (422). A selection made on an older version still counts when
/// the passage sits at the same place in the current body, since then nothing it points at
/// has moved.
pub fn checked_selection(selection: &Selection, document: &Document) -> Result<(), WorkspaceError> {
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
    if *version > document.version {
        return Err(WorkspaceError::Mismatch(format!(
            "the selection names version {version} of the document, which is only at version {}",
            document.version
        )));
    }
    let at: String = usize::try_from(*start)
        .ok()
        .map(|start| document.content.chars().skip(start).take(len).collect())
        .unwrap_or_default();
    if at != *text {
        let why = if *version != document.version {
            format!(
                "the document is at version {} now, not {version}, and the passage is no longer \
                 at {start}..{end}",
                document.version
            )
        } else {
            format!("version {version} does not read that text at {start}..{end}")
        };
        return Err(WorkspaceError::Mismatch(format!(
            "the selected text is not in the document: {why}; select it again"
        )));
    }
    Ok(())
}

/// The message the agent reads for `message` about `selection`: the passage quoted first, with
/// where it sits, so the model knows what "this" refers to and can quote it in an edit.
pub fn message_about(selection: &Selection, message: &str) -> String {
    let quoted: String = selection
        .text
        .lines()
        .map(|line| format!("> {line}\n"))
        .collect();
    format!(
        "About this passage of the document (characters {}-{} of version {}):\n\n{quoted}\n{message}",
        selection.start, selection.end, selection.version
    )
}
