//! The person's side: the mode, the list, accept and reject.
//!
//! Deciding is one conditional `UPDATE … WHERE status = 'open'` made *before* anything else is
//! written, so two people deciding the same suggestion at once cannot both win: the second
//! statement waits for the first transaction and then matches no row, and its caller gets a
//! conflict (409) with nothing written. An accept then holds the document row from its read to
//! its write, like any in-place edit.

use crate::{
    workspace::suggestions::apply::applied_body, workspace::suggestions::apply::suggestion_diff,
};

use crate::workspace::handles::ThreadSuggestions;
use crate::{
    workspace::announce::Source, workspace::document::empty_document,
    workspace::error::WorkspaceError, workspace::revision::ChangeNote, workspace::view::View,
};
use haico_store::{Document, Suggestion, ThreadId};
use haico_store::{DocumentMode, SuggestionKind, SuggestionStatus};

/// A suggestion with its diff against the document as it is now.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedSuggestion {
    /// The stored suggestion.
    pub suggestion: Suggestion,
    /// For an open suggestion, the unified diff from the current document to the document with
    /// it applied (`None` when it no longer applies); for a decided one, the diff it had when
    /// it was decided.
    pub diff: Option<String>,
    /// Whether accepting it now would apply (always false once decided).
    pub applies: bool,
}

/// What an accept did.
#[derive(Debug, Clone, PartialEq)]
pub struct Accepted {
    /// The suggestion, now accepted.
    pub suggestion: ListedSuggestion,
    /// The document with it applied (a new version).
    pub document: Document,
}

/// `suggestions` with their diffs against `document`.
pub(crate) fn listed(document: &Document, suggestions: Vec<Suggestion>) -> Vec<ListedSuggestion> {
    suggestions
        .into_iter()
        .map(|suggestion| {
            if suggestion.status != SuggestionStatus::Open {
                let diff = suggestion.diff.clone();
                return ListedSuggestion {
                    suggestion,
                    diff,
                    applies: false,
                };
            }
            match applied_body(&document.content, &suggestion) {
                Ok(body) => {
                    let diff = suggestion_diff(
                        &document.content,
                        &body,
                        &format!("document (version {})", document.version),
                        &format!("with suggestion #{}", suggestion.id),
                    );
                    ListedSuggestion {
                        suggestion,
                        diff: Some(diff),
                        applies: true,
                    }
                }
                Err(_) => ListedSuggestion {
                    suggestion,
                    diff: None,
                    applies: false,
                },
            }
        })
        .collect()
}

impl View {
    /// The thread's document mode.
    pub async fn document_mode(&mut self) -> Result<DocumentMode, WorkspaceError> {
        let mode = self.repo.suggestions().document_mode(&self.thread).await?;
        Ok(mode.unwrap_or_default())
    }

    /// The thread's suggestions (of one status when given), with diffs against the document.
    pub async fn suggestions(
        &mut self,
        status: Option<SuggestionStatus>,
    ) -> Result<Vec<ListedSuggestion>, WorkspaceError> {
        let thread = self.thread.clone();
        let found = self.repo.suggestions().suggestions(&thread, status).await?;
        if found.is_empty() {
            return Ok(Vec::new());
        }
        let document = self
            .repo
            .documents()
            .get_document(&thread)
            .await?
            .unwrap_or_else(empty_document);
        Ok(listed(&document, found))
    }

    /// The mode and every suggestion as they stood right after revision `rev`, with diffs
    /// against the document of that revision.
    pub async fn suggestions_at(
        &mut self,
        rev: i64,
    ) -> Result<(DocumentMode, Vec<ListedSuggestion>), WorkspaceError> {
        let thread = self.thread.clone();
        let (mode, found) =
            crate::workspace::history::replay::suggestions_at(&mut self.repo, &thread, rev).await?;
        let document = crate::workspace::history::replay::document_at(&mut self.repo, &thread, rev)
            .await?
            .unwrap_or_else(empty_document);
        Ok((mode, listed(&document, found)))
    }
}

/// The error for a suggestion that is no longer open.
fn decided(suggestion: &Suggestion) -> WorkspaceError {
    WorkspaceError::Conflict(format!(
        "suggestion #{} was already decided: it is {}",
        suggestion.id,
        suggestion.status.as_str()
    ))
}

impl ThreadSuggestions<'_> {
    /// The thread's suggestions, of one status when given.
    pub async fn list(
        &self,
        status: Option<SuggestionStatus>,
    ) -> Result<Vec<ListedSuggestion>, WorkspaceError> {
        let mut view = self.workspaces.view(self.thread).await?;
        let found = view.suggestions(status).await;
        view.settle(found).await
    }

    /// A person accepts suggestion `id`: its edits are applied to the document as it is now,
    /// as a new version and revision. When they no longer apply, the suggestion becomes
    /// `outdated`, the document is unchanged, and the answer is a conflict saying why.
    pub async fn accept(&self, id: i64) -> Result<Accepted, WorkspaceError> {
        let mut edit = self.workspaces.edit(self.thread, Source::User).await?;
        let by = edit.made_by().map(str::to_string);
        let outcome = async {
            let repo = edit.repo();
            let found = open_suggestion(repo, self.thread, id).await?;
            let document = repo
                .documents()
                .document_for_edit(self.thread)
                .await?
                .unwrap_or_else(empty_document);
            let body = match applied_body(&document.content, &found) {
                Ok(body) => body,
                Err(why) => return Ok(Err((found, why))),
            };
            let diff = suggestion_diff(
                &document.content,
                &body,
                &format!("document (version {})", document.version),
                &format!("version {}", document.version + 1),
            );
            let Some(accepted) = repo
                .suggestions()
                .decide_suggestion(
                    self.thread,
                    id,
                    SuggestionStatus::Accepted,
                    by.as_deref(),
                    Some(&diff),
                )
                .await?
            else {
                return Err(decided(&found));
            };
            let written = edit
                .document()
                .replace(&body, accepted.title.as_deref(), Some(document.version))
                .await?;
            Ok(Ok(Accepted {
                suggestion: ListedSuggestion {
                    suggestion: accepted,
                    diff: Some(diff),
                    applies: false,
                },
                document: written,
            }))
        }
        .await;
        match outcome {
            Ok(Ok(accepted)) => {
                edit.commit(ChangeNote::user(format!(
                    "accepted suggestion #{id} (document version {})",
                    accepted.document.version
                )))
                .await?;
                Ok(accepted)
            }
            Ok(Err((found, why))) => {
                let marked = edit
                    .repo()
                    .suggestions()
                    .decide_suggestion(
                        self.thread,
                        id,
                        SuggestionStatus::Outdated,
                        by.as_deref(),
                        None,
                    )
                    .await;
                match marked {
                    Ok(Some(_)) => {
                        edit.commit(ChangeNote::user(format!(
                            "suggestion #{id} no longer applies: marked outdated"
                        )))
                        .await?;
                        Err(WorkspaceError::Conflict(format!(
                            "suggestion #{id} no longer applies to the document ({why}); it is \
                             now outdated and the document is unchanged"
                        )))
                    }
                    Ok(None) => {
                        edit.discard().await;
                        Err(decided(&found))
                    }
                    Err(err) => {
                        edit.discard().await;
                        Err(err.into())
                    }
                }
            }
            Err(err) => {
                edit.discard().await;
                Err(err)
            }
        }
    }

    /// A person rejects suggestion `id`; the document is unchanged.
    pub async fn reject(&self, id: i64) -> Result<ListedSuggestion, WorkspaceError> {
        let mut edit = self.workspaces.edit(self.thread, Source::User).await?;
        let by = edit.made_by().map(str::to_string);
        let outcome = async {
            let repo = edit.repo();
            let found = open_suggestion(repo, self.thread, id).await?;
            let document = repo
                .documents()
                .get_document(self.thread)
                .await?
                .unwrap_or_else(empty_document);
            let diff = listed(&document, vec![found.clone()])
                .pop()
                .and_then(|listed| listed.diff);
            let rejected = repo
                .suggestions()
                .decide_suggestion(
                    self.thread,
                    id,
                    SuggestionStatus::Rejected,
                    by.as_deref(),
                    diff.as_deref(),
                )
                .await?
                .ok_or_else(|| decided(&found))?;
            let diff = rejected.diff.clone();
            Ok(ListedSuggestion {
                suggestion: rejected,
                diff,
                applies: false,
            })
        }
        .await;
        self.workspaces
            .settle(edit, outcome, |_| format!("rejected suggestion #{id}"))
            .await
    }
}

/// The error for a suggestion this thread does not have.
fn unknown(id: i64) -> WorkspaceError {
    WorkspaceError::NotFound(format!("suggestion #{id} does not exist in this thread"))
}

/// The most open suggestions the agent's snapshot lists, and the most characters of each edit
/// it quotes.
const PROMPT_SUGGESTIONS: usize = 20;
const PROMPT_EDIT_CHARS: usize = 300;

impl View {
    /// What the agent's snapshot says about suggestions: the mode, and in `suggest` mode the
    /// open suggestions (so the model neither proposes one twice nor contradicts one), each
    /// with its reason and its edits, cut to a budget. Empty in `direct` mode with nothing open.
    pub async fn suggestions_note(&mut self) -> Result<String, WorkspaceError> {
        let mode = self.document_mode().await?;
        let open = self
            .repo
            .suggestions()
            .suggestions(&self.thread, Some(SuggestionStatus::Open))
            .await?;
        if mode == DocumentMode::Direct && open.is_empty() {
            return Ok(String::new());
        }
        let mut out = format!("<suggestions mode=\"{}\">\n", mode.as_str());
        if mode == DocumentMode::Suggest {
            out.push_str(
                "The document is in suggest mode: update_document, append_to_document and \
                 edit_document do not change it; each call proposes a suggestion that the user \
                 accepts or rejects. Quote old_text from the document as it is now, not as an \
                 open suggestion would leave it.\n",
            );
        }
        if open.is_empty() {
            out.push_str("No open suggestions.\n");
        }
        for suggestion in open.iter().take(PROMPT_SUGGESTIONS) {
            out.push_str(&format!(
                "#{} ({}, turn {}): {}\n",
                suggestion.id,
                suggestion.kind.as_str(),
                suggestion.turn_index,
                suggestion.action_and_reasoning.as_deref().unwrap_or("")
            ));
            for edit in &suggestion.edits {
                let cut = |text: &str| -> String {
                    let mut short: String = text.chars().take(PROMPT_EDIT_CHARS).collect();
                    if short.len() < text.len() {
                        short.push('…');
                    }
                    short
                };
                match suggestion.kind {
                    SuggestionKind::Append => {
                        out.push_str(&format!("  append: {:?}\n", cut(&edit.new_text)))
                    }
                    SuggestionKind::Replace => {
                        out.push_str(&format!("  new body: {:?}\n", cut(&edit.new_text)))
                    }
                    SuggestionKind::Edit => out.push_str(&format!(
                        "  {:?} -> {:?}\n",
                        cut(&edit.old_text),
                        cut(&edit.new_text)
                    )),
                }
            }
        }
        if open.len() > PROMPT_SUGGESTIONS {
            out.push_str(&format!(
                "(and {} more open suggestions)\n",
                open.len() - PROMPT_SUGGESTIONS
            ));
        }
        out.push_str("</suggestions>\n\n");
        Ok(out)
    }
}

impl ThreadSuggestions<'_> {
    /// The document mode and the open suggestions, now or right after revision `at`.
    pub async fn panel(
        &self,
        at: Option<i64>,
    ) -> Result<(DocumentMode, Vec<ListedSuggestion>), WorkspaceError> {
        let mut view = self.workspaces.view(self.thread).await?;
        let found = async {
            match at {
                Some(rev) => view.suggestions_at(rev).await,
                None => {
                    let mode = view.document_mode().await?;
                    Ok((mode, view.suggestions(Some(SuggestionStatus::Open)).await?))
                }
            }
        }
        .await;
        view.settle(found).await
    }
}

/// Suggestion `id` of the thread, which must still be open: unknown is "not found", decided a
/// conflict naming how it was decided.
async fn open_suggestion(
    repo: &mut haico_store::Transaction,
    thread: &ThreadId,
    id: i64,
) -> Result<Suggestion, WorkspaceError> {
    let found = repo
        .suggestions()
        .suggestion(thread, id)
        .await?
        .ok_or_else(|| unknown(id))?;
    if found.status != SuggestionStatus::Open {
        return Err(decided(&found));
    }
    Ok(found)
}
