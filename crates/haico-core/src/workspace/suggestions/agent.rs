//! The agent's side: in `suggest` mode a document tool stores a suggestion instead of writing.
//!
//! A suggestion is checked exactly as the direct write would be (the same limits, the same
//! "occurs exactly once" rule against the document as it is now, the same error texts), so a
//! model learns nothing new to switch modes, and a suggestion that is stored applies at least
//! to the document it was made on. During a turn about a person's selection, a suggestion may
//! only change the selected passage ([`Focus::confines`](super::Focus::confines)).

use super::{DocumentMode, applied_body, apply::suggestion_diff};
use crate::store::{NewSuggestion, SuggestedEdit, Suggestion};
use crate::workspace::{
    Edit, MAX_DOCUMENT_CHARS, TextEdit, WorkspaceError,
    document::{check_replacement, check_text_edits, checked_title},
    empty_document,
    rules::{char_count, check_length},
};

/// What a document tool would have done, to be proposed instead.
#[derive(Debug, Clone, Copy)]
pub enum SuggestionDraft<'a> {
    /// `update_document`: a whole new body, and maybe a title.
    Replace {
        /// The new body.
        content: &'a str,
        /// The new title, if any.
        title: Option<&'a str>,
    },
    /// `append_to_document`: text for the end.
    Append {
        /// The text.
        text: &'a str,
    },
    /// `edit_document`: passages to change.
    Edit {
        /// The edits, in order.
        edits: &'a [TextEdit<'a>],
    },
}

/// What a document tool did: wrote the document, or stored a suggestion instead.
#[derive(Debug)]
pub enum Written<T> {
    /// `direct` mode: the write's own outcome.
    Direct(T),
    /// `suggest` mode: the suggestion stored (boxed: a suggestion row is large, and most
    /// writes are direct).
    Suggested(Box<Suggestion>),
}

impl Edit {
    /// Runs `direct` (the document tool's write) in `direct` mode; in `suggest` mode stores
    /// `draft` as a suggestion instead.
    ///
    /// While the thread's lock is still to be taken (an agent's call on PostgreSQL), the write
    /// goes first, on the guess that the mode is `direct` (the default, and most threads'): its
    /// first statement takes the lock and reads the mode in the same round trip, one fewer than
    /// asking first. In `suggest` mode, which the lock's answer tells, everything the write did
    /// is undone (one round trip) and the suggestion stored, exactly as if the mode had been
    /// asked first; the write's own outcome, success or failure, is dropped.
    pub async fn write_or_suggest<T>(
        &mut self,
        draft: SuggestionDraft<'_>,
        direct: impl AsyncFnOnce(&mut Edit) -> Result<T, WorkspaceError>,
    ) -> Result<Written<T>, WorkspaceError> {
        if self.is_unconfirmed() {
            let written = direct(self).await;
            if self.document_mode().await? == DocumentMode::Direct {
                return written.map(Written::Direct);
            }
            self.start_over().await?;
        } else if self.document_mode().await? == DocumentMode::Direct {
            return direct(self).await.map(Written::Direct);
        }
        self.suggest(draft)
            .await
            .map(|suggestion| Written::Suggested(Box::new(suggestion)))
    }

    /// The thread's document mode.
    pub async fn document_mode(&mut self) -> Result<DocumentMode, WorkspaceError> {
        self.confirm().await?;
        if let Some(mode) = self.known_document_mode() {
            return Ok(DocumentMode::parse(mode).unwrap_or_default());
        }
        let thread = self.thread_id();
        let mode = self
            .repo()
            .suggestions()
            .document_mode(&thread)
            .await?
            .ok_or_else(|| WorkspaceError::UnknownThread(thread.to_string()))?;
        Ok(DocumentMode::parse(&mode).unwrap_or_default())
    }

    /// Stores `draft` as an open suggestion, checked against the document as it is now; the
    /// document itself is not touched.
    pub async fn suggest(
        &mut self,
        draft: SuggestionDraft<'_>,
    ) -> Result<Suggestion, WorkspaceError> {
        let (kind, title, edits) = match draft {
            SuggestionDraft::Replace { content, title } => {
                check_replacement(content, title, None)?;
                ("replace", checked_title(title)?, None)
            }
            SuggestionDraft::Append { text } => {
                if text.is_empty() {
                    return Err(WorkspaceError::invalid(
                        "`text` is empty: pass the text to append",
                    ));
                }
                check_length(text, "text", MAX_DOCUMENT_CHARS)?;
                ("append", None, None)
            }
            SuggestionDraft::Edit { edits } => {
                check_text_edits(edits)?;
                ("edit", None, Some(edits))
            }
        };
        let thread = self.thread_id();
        let document = self.repo().documents().get_document(&thread).await?;
        if kind == "edit" && document.as_ref().is_none_or(|d| d.content.is_empty()) {
            return Err(WorkspaceError::invalid(
                "the document is empty, so there is no text to edit: suggest it with \
                 update_document or append_to_document",
            ));
        }
        let document = document.unwrap_or_else(empty_document);
        let stored_edits: Vec<SuggestedEdit> = match draft {
            SuggestionDraft::Replace { content, .. } => vec![SuggestedEdit {
                old_text: document.content.clone(),
                new_text: content.to_string(),
            }],
            SuggestionDraft::Append { text } => vec![SuggestedEdit {
                old_text: String::new(),
                new_text: text.to_string(),
            }],
            SuggestionDraft::Edit { .. } => edits
                .unwrap_or_default()
                .iter()
                .map(|edit| SuggestedEdit {
                    old_text: edit.old_text.to_string(),
                    new_text: edit.new_text.to_string(),
                })
                .collect(),
        };
        let mut draft_row = Suggestion {
            id: 0,
            status: super::SuggestionStatus::Open.as_str().to_string(),
            kind: kind.to_string(),
            turn_index: self.turn_index(),
            by: self.made_by().map(str::to_string),
            action_and_reasoning: self.reason().map(str::to_string),
            base_version: document.version,
            title: title.map(str::to_string),
            edits: stored_edits,
            created_at: chrono::Utc::now(),
            decided_at: None,
            decided_by: None,
            diff: None,
        };
        let body = applied_body(&document.content, &draft_row)?;
        if let Some(focus) = self.focus() {
            if title.is_some_and(|t| t != document.title) {
                return Err(WorkspaceError::invalid(
                    "this turn is about the passage the person selected, and the title is \
                     outside it, so nothing was suggested; suggest changes inside the passage only",
                ));
            }
            focus.confines(&document.content, &body)?;
        }
        let chars = char_count(&body);
        if chars > MAX_DOCUMENT_CHARS {
            return Err(WorkspaceError::invalid(format!(
                "the document would be {chars} characters long with this suggestion; the limit is \
                 {MAX_DOCUMENT_CHARS}"
            )));
        }
        let retitles = title.is_some_and(|t| t != document.title);
        if body == document.content && !retitles {
            return Err(WorkspaceError::invalid(
                "this would leave the document exactly as it is, so nothing was suggested",
            ));
        }
        for open in self
            .repo()
            .suggestions()
            .suggestions(&thread, Some("open"))
            .await?
        {
            if open.kind == draft_row.kind
                && open.edits == draft_row.edits
                && open.title == draft_row.title
            {
                return Err(WorkspaceError::invalid(format!(
                    "suggestion #{} already proposes exactly this and is waiting for the person \
                     to decide; do not suggest it again",
                    open.id
                )));
            }
        }
        let diff = suggestion_diff(
            &document.content,
            &body,
            &format!("document (version {})", document.version),
            "with the suggestion",
        );
        draft_row.diff = Some(diff);
        let stored = self
            .repo()
            .suggestions()
            .add_suggestion(
                &thread,
                NewSuggestion {
                    kind: &draft_row.kind,
                    turn_index: draft_row.turn_index,
                    by: draft_row.by.as_deref(),
                    action_and_reasoning: draft_row.action_and_reasoning.as_deref(),
                    base_version: draft_row.base_version,
                    title: draft_row.title.as_deref(),
                    edits: &draft_row.edits,
                    diff: draft_row.diff.as_deref(),
                },
            )
            .await?;
        Ok(stored)
    }
}
