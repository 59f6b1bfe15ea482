//! Suggestions and the thread's document mode: the rows behind issue 25's "the agent proposes,
//! the person decides".
//!
//! A suggestion is written once by the agent and afterwards only decided: its status moves from
//! `open` to `accepted`, `rejected` or `outdated` by a conditional `UPDATE … WHERE status =
//! 'open'`, so of two people deciding at once exactly one changes the row and the other is told
//! it was decided already. Every write records its effect in the journal (an added suggestion,
//! a suggestion as it reads after its decision), so the history replays the list like the plan.

use chrono::{DateTime, Utc};

use super::repository::repository;
use crate::panels::{DocumentMode, Panel, SuggestionKind, SuggestionStatus};
use crate::thread_id::ThreadId;
use crate::{
    error::Context, error::StoreError, journal::HasId, journal::ListOp, models::SuggestedEdit,
    models::Suggestion, query::params, query::row_shape, repository::now,
};

impl HasId for Suggestion {
    fn id(&self) -> i64 {
        self.id
    }
}

/// A suggestion as the table holds it: edits as JSON text, status and kind as their spellings.
struct SuggestionRow {
    id: i64,
    status: String,
    kind: String,
    turn_index: i64,
    by_name: Option<String>,
    action_and_reasoning: Option<String>,
    base_version: i64,
    title: Option<String>,
    edits: String,
    created_at: DateTime<Utc>,
    decided_at: Option<DateTime<Utc>>,
    decided_by: Option<String>,
    diff: Option<String>,
}

row_shape!(SuggestionRow as SUGGESTION_COLUMNS {
    id: i64,
    status: String,
    kind: String,
    turn_index: i64,
    by_name: Option<String>,
    action_and_reasoning: Option<String>,
    base_version: i64,
    title: Option<String>,
    edits: String,
    created_at: DateTime<Utc>,
    decided_at: Option<DateTime<Utc>>,
    decided_by: Option<String>,
    diff: Option<String>,
} => SuggestionRow {
    id,
    status,
    kind,
    turn_index,
    by_name,
    action_and_reasoning,
    base_version,
    title,
    edits,
    created_at,
    decided_at,
    decided_by,
    diff,
});

impl SuggestionRow {
    /// The suggestion the row holds: the one place its `status` and `kind` columns are read.
    fn decode(self) -> Result<Suggestion, StoreError> {
        let unknown = |column: &'static str, value: &str| StoreError::UnknownWord {
            column,
            value: value.to_string(),
        };
        Ok(Suggestion {
            id: self.id,
            status: SuggestionStatus::parse(&self.status)
                .ok_or_else(|| unknown("suggestion status", &self.status))?,
            kind: SuggestionKind::parse(&self.kind)
                .ok_or_else(|| unknown("suggestion kind", &self.kind))?,
            turn_index: self.turn_index,
            by: self.by_name,
            action_and_reasoning: self.action_and_reasoning,
            base_version: self.base_version,
            title: self.title,
            edits: serde_json::from_str(&self.edits)?,
            created_at: self.created_at,
            decided_at: self.decided_at,
            decided_by: self.decided_by,
            diff: self.diff,
        })
    }
}

/// A new suggestion, before it has an id.
#[derive(Debug, Clone, Copy)]
pub struct NewSuggestion<'a> {
    /// Which tool it stands for.
    pub kind: SuggestionKind,
    /// The turn making it.
    pub turn_index: i64,
    /// On whose behalf.
    pub by: Option<&'a str>,
    /// The agent's sentence.
    pub action_and_reasoning: Option<&'a str>,
    /// The document version it is made on.
    pub base_version: i64,
    /// A new title, if any.
    pub title: Option<&'a str>,
    /// The changes.
    pub edits: &'a [SuggestedEdit],
    /// The diff against the document it was made on.
    pub diff: Option<&'a str>,
}

repository!(
    /// Suggestions and the thread's document mode.
    SuggestionsRepo,
    suggestions
);

impl SuggestionsRepo<'_> {
    /// The thread's document mode; `None` for an unknown thread.
    pub async fn document_mode(
        &mut self,
        thread_id: &ThreadId,
    ) -> Result<Option<DocumentMode>, StoreError> {
        let row: Option<(String,)> = self
            .fetch_optional(
                "SELECT document_mode FROM threads WHERE id = $1",
                &params![thread_id],
            )
            .await
            .context("reading the document mode")?;
        Ok(row.map(|(mode,)| DocumentMode::from_stored(Some(&mode))))
    }

    /// Sets the document mode; returns whether it changed (recorded for the history only then).
    pub async fn set_document_mode(
        &mut self,
        thread_id: &ThreadId,
        mode: DocumentMode,
    ) -> Result<bool, StoreError> {
        let changed = self
            .execute(
                "UPDATE threads SET document_mode = $2 WHERE id = $1 AND document_mode <> $2",
                &params![thread_id, mode.as_str()],
            )
            .await
            .context("setting the document mode")?;
        if changed > 0 {
            self.mark(Panel::Suggestions);
            self.journal_mut().document_mode = Some(mode);
        }
        Ok(changed > 0)
    }

    /// Stores a new suggestion with the thread's next number and returns it.
    pub async fn add_suggestion(
        &mut self,
        thread_id: &ThreadId,
        new: NewSuggestion<'_>,
    ) -> Result<Suggestion, StoreError> {
        let at = now();
        let edits = serde_json::to_string(new.edits)?;
        let sql = format!(
            "INSERT INTO suggestions (thread_id, id, status, kind, turn_index, by_name, \
             action_and_reasoning, base_version, title, edits, created_at, diff) \
             VALUES ($1, (SELECT COALESCE(MAX(id), 0) + 1 FROM suggestions WHERE thread_id = $1), \
             'open', $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING {SUGGESTION_COLUMNS}"
        );
        let row: SuggestionRow = self
            .fetch_one(
                &sql,
                &params![
                    thread_id,
                    new.kind.as_str(),
                    new.turn_index,
                    new.by,
                    new.action_and_reasoning,
                    new.base_version,
                    new.title,
                    &edits,
                    at,
                    new.diff
                ],
            )
            .await
            .context("storing a suggestion")?;
        let suggestion = row.decode()?;
        self.mark(Panel::Suggestions);
        self.journal_mut().suggestions.push(ListOp::Add {
            items: vec![suggestion.clone()],
        });
        Ok(suggestion)
    }

    /// The thread's suggestions in id order, of one status when given.
    pub async fn suggestions(
        &mut self,
        thread_id: &ThreadId,
        status: Option<SuggestionStatus>,
    ) -> Result<Vec<Suggestion>, StoreError> {
        let rows: Vec<SuggestionRow> = match status.map(SuggestionStatus::as_str) {
            Some(status) => {
                let sql = format!(
                    "SELECT {SUGGESTION_COLUMNS} FROM suggestions \
                     WHERE thread_id = $1 AND status = $2 ORDER BY id"
                );
                self.fetch_all(&sql, &params![thread_id, status]).await
            }
            None => {
                let sql = format!(
                    "SELECT {SUGGESTION_COLUMNS} FROM suggestions WHERE thread_id = $1 ORDER BY id"
                );
                self.fetch_all(&sql, &params![thread_id]).await
            }
        }
        .context("reading suggestions")?;
        rows.into_iter().map(SuggestionRow::decode).collect()
    }

    /// One suggestion of the thread.
    pub async fn suggestion(
        &mut self,
        thread_id: &ThreadId,
        id: i64,
    ) -> Result<Option<Suggestion>, StoreError> {
        let sql = format!(
            "SELECT {SUGGESTION_COLUMNS} FROM suggestions WHERE thread_id = $1 AND id = $2"
        );
        let row: Option<SuggestionRow> = self
            .fetch_optional(&sql, &params![thread_id, id])
            .await
            .context("reading a suggestion")?;
        row.map(SuggestionRow::decode).transpose()
    }

    /// Decides an open suggestion: sets its status, who and when, and the diff to keep. The
    /// condition `status = 'open'` is part of the statement, so of two concurrent decisions
    /// exactly one changes the row; `None` means it was not open (or does not exist).
    pub async fn decide_suggestion(
        &mut self,
        thread_id: &ThreadId,
        id: i64,
        status: SuggestionStatus,
        by: Option<&str>,
        diff: Option<&str>,
    ) -> Result<Option<Suggestion>, StoreError> {
        let sql = format!(
            "UPDATE suggestions SET status = $3, decided_at = $4, decided_by = $5, \
             diff = COALESCE($6, diff) \
             WHERE thread_id = $1 AND id = $2 AND status = 'open' RETURNING {SUGGESTION_COLUMNS}"
        );
        let row: Option<SuggestionRow> = self
            .fetch_optional(
                &sql,
                &params![thread_id, id, status.as_str(), now(), by, diff],
            )
            .await
            .context("deciding a suggestion")?;
        let Some(row) = row else {
            return Ok(None);
        };
        let suggestion = row.decode()?;
        self.mark(Panel::Suggestions);
        self.journal_mut().suggestions.push(ListOp::Update {
            item: suggestion.clone(),
        });
        Ok(Some(suggestion))
    }

    /// Writes suggestions exactly as given (an import's or a fork's present state), and the
    /// document mode. Nothing is journaled: the caller records the history itself.
    pub async fn write_suggestions_exact(
        &mut self,
        thread_id: &ThreadId,
        mode: DocumentMode,
        suggestions: &[Suggestion],
    ) -> Result<(), StoreError> {
        self.execute(
            "UPDATE threads SET document_mode = $2 WHERE id = $1",
            &params![thread_id, mode.as_str()],
        )
        .await
        .context("writing the document mode")?;
        for s in suggestions {
            let edits = serde_json::to_string(&s.edits)?;
            self.execute(
                "INSERT INTO suggestions (thread_id, id, status, kind, turn_index, by_name, \
                 action_and_reasoning, base_version, title, edits, created_at, decided_at, \
                 decided_by, diff) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, \
                 $13, $14)",
                &params![
                    thread_id,
                    s.id,
                    s.status.as_str(),
                    s.kind.as_str(),
                    s.turn_index,
                    s.by.as_ref(),
                    s.action_and_reasoning.as_ref(),
                    s.base_version,
                    s.title.as_ref(),
                    &edits,
                    s.created_at,
                    s.decided_at,
                    s.decided_by.as_ref(),
                    s.diff.as_ref()
                ],
            )
            .await
            .context("writing a suggestion")?;
        }
        Ok(())
    }

    /// Records suggestions written by [`write_suggestions_exact`](Self::write_suggestions_exact)
    /// as this change's whole state of the panel (a fork's first revision), when there is
    /// anything to record.
    pub fn journal_suggestions(&mut self, mode: DocumentMode, suggestions: Vec<Suggestion>) {
        if mode != DocumentMode::Direct {
            self.mark(Panel::Suggestions);
            self.journal_mut().document_mode = Some(mode);
        }
        if !suggestions.is_empty() {
            self.mark(Panel::Suggestions);
            self.journal_mut()
                .suggestions
                .push(ListOp::Set { items: suggestions });
        }
    }
}
