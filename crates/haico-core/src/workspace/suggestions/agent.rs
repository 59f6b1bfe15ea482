//! The agent's side: in `suggest` mode a document tool stores a suggestion instead of writing.
//!
//! A suggestion is the very [`DocumentChange`] the direct write would take, checked and applied
//! by the same code (the same limits, the same "occurs exactly once" rule against the document
//! as it is now, the same error texts), so a model learns nothing new to switch modes, and a
//! suggestion that is stored applies at least to the document it was made on. During a turn about a person's selection, a suggestion may
//! only change the selected passage ([`Focus::confines`](super::Focus::confines)).

use crate::workspace::suggestions::apply::suggestion_diff;

use crate::workspace::handles::DocumentEdit;
use crate::{
    workspace::document::DocumentChanged, workspace::document::change::DocumentChange,
    workspace::document::empty_document, workspace::error::WorkspaceError,
    workspace::rules::char_count,
};
use haico_store::{DocumentMode, SuggestionStatus};
use haico_store::{NewSuggestion, Suggestion};

/// What a document tool did: wrote the document, or stored a suggestion instead.
#[derive(Debug)]
pub enum Written {
    /// `direct` mode: what the write did.
    Direct(DocumentChanged),
    /// `suggest` mode: the suggestion stored (boxed: a suggestion row is large, and most
    /// writes are direct).
    Suggested(Box<Suggestion>),
}

impl DocumentEdit<'_> {
    /// Writes `change` in `direct` mode ([`DocumentEdit::change`], where `replace_all` lifts a
    /// rewrite's guard against loss); in `suggest` mode stores it as a suggestion instead.
    ///
    /// While the thread's lock is still to be taken (an agent's call on PostgreSQL), the write
    /// goes first, on the guess that the mode is `direct` (the default, and most threads'): its
    /// first statement takes the lock and reads the mode in the same round trip, one fewer than
    /// asking first. In `suggest` mode, which the lock's answer tells, everything the write did
    /// is undone (one round trip) and the suggestion stored, exactly as if the mode had been
    /// asked first; the write's own outcome, success or failure, is dropped.
    pub async fn write_or_suggest(
        &mut self,
        change: &DocumentChange<'_>,
        replace_all: bool,
    ) -> Result<Written, WorkspaceError> {
        if self.edit.is_unconfirmed() {
            let written = self.change(change, replace_all).await;
            if self.mode().await? == DocumentMode::Direct {
                return written.map(Written::Direct);
            }
            self.edit.start_over().await?;
        } else if self.mode().await? == DocumentMode::Direct {
            return self.change(change, replace_all).await.map(Written::Direct);
        }
        self.suggest(change)
            .await
            .map(|suggestion| Written::Suggested(Box::new(suggestion)))
    }

    /// The thread's document mode.
    pub async fn mode(&mut self) -> Result<DocumentMode, WorkspaceError> {
        self.edit.confirm().await?;
        if let Some(mode) = self.edit.known_document_mode() {
            return Ok(mode);
        }
        let thread = self.edit.thread_id();
        let mode = self
            .edit
            .repo()
            .suggestions()
            .document_mode(&thread)
            .await?
            .ok_or_else(|| WorkspaceError::UnknownThread(thread.to_string()))?;
        Ok(mode)
    }

    /// Stores `change` as an open suggestion, checked against the document as it is now; the
    /// document itself is not touched.
    pub async fn suggest(
        &mut self,
        change: &DocumentChange<'_>,
    ) -> Result<Suggestion, WorkspaceError> {
        change.check()?;
        let title = change.title();
        let thread = self.edit.thread_id();
        let document = self.edit.repo().documents().get_document(&thread).await?;
        change.check_target(document.as_ref(), DocumentMode::Suggest)?;
        let document = document.unwrap_or_else(empty_document);
        let mut draft_row = Suggestion {
            id: 0,
            status: SuggestionStatus::Open,
            kind: change.kind(),
            turn_index: self.edit.turn_index(),
            by: self.edit.made_by().map(str::to_string),
            action_and_reasoning: self.edit.reason().map(str::to_string),
            base_version: document.version,
            title: title.map(str::to_string),
            edits: change.suggested_edits(&document.content),
            created_at: chrono::Utc::now(),
            decided_at: None,
            decided_by: None,
            diff: None,
        };
        let body = change.applied_to(&document.content)?;
        if let Some(focus) = self.edit.focus() {
            if title.is_some_and(|t| t != document.title) {
                return Err(WorkspaceError::invalid(
                    "this turn is about the passage the person selected, and the title is \
                     outside it, so nothing was suggested; suggest changes inside the passage only",
                ));
            }
            focus.confines(&document.content, &body)?;
        }
        change.check_size(char_count(&body), DocumentMode::Suggest)?;
        let retitles = title.is_some_and(|t| t != document.title);
        if body == document.content && !retitles {
            return Err(WorkspaceError::invalid(
                "this would leave the document exactly as it is, so nothing was suggested",
            ));
        }
        for open in self
            .edit
            .repo()
            .suggestions()
            .suggestions(&thread, Some(SuggestionStatus::Open))
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
            .edit
            .repo()
            .suggestions()
            .add_suggestion(
                &thread,
                NewSuggestion {
                    kind: draft_row.kind,
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
