//! The workspace at any revision, rebuilt from the nearest whole state and the records after it.

use crate::workspace::error::WorkspaceError;
use haico_store::{
    Document, PlanStep, Preference, Transaction, Workspace, journal::DocumentDelta, journal::HasId,
    journal::ListOp, journal::TextOp, journal::apply_list, journal::apply_text,
};

/// Rebuilds the workspace of `thread` as it stood right after revision `rev` (0: empty).
pub(crate) async fn workspace_at(
    repo: &mut Transaction,
    thread: &haico_store::ThreadId,
    rev: i64,
) -> Result<Workspace, WorkspaceError> {
    Ok(Workspace {
        objective: objective_at(repo, thread, rev).await?,
        document: document_at(repo, thread, rev).await?,
        plan: list_at::<PlanStep>(repo, thread, "plan", rev).await?,
        preferences: list_at::<Preference>(repo, thread, "preferences", rev).await?,
        artifacts: repo.history().artifacts_at(thread, rev).await?,
    })
}

pub(super) async fn objective_at(
    repo: &mut Transaction,
    thread: &haico_store::ThreadId,
    rev: i64,
) -> Result<Option<String>, WorkspaceError> {
    let records = repo
        .history()
        .panel_records(thread, "objective", rev)
        .await?;
    match records.last() {
        Some(record) => from_json(&record.data),
        None => Ok(None),
    }
}

/// The document at `rev`: its last whole state, then every recorded edit after it.
pub(crate) async fn document_at(
    repo: &mut Transaction,
    thread: &haico_store::ThreadId,
    rev: i64,
) -> Result<Option<Document>, WorkspaceError> {
    let mut document: Option<Document> = None;
    for record in repo
        .history()
        .panel_records(thread, "document", rev)
        .await?
    {
        if record.whole {
            document = from_json(&record.data)?;
        } else {
            let delta: DocumentDelta = from_json(&record.data)?;
            let doc = document.get_or_insert_with(crate::workspace::document::empty_document);
            for op in &delta.ops {
                apply_text(&mut doc.content, op);
            }
            doc.title = delta.title;
            doc.version = delta.version;
        }
    }
    Ok(document)
}

/// One recorded change of the document, parsed.
enum DocumentRecord {
    /// Its whole state (`None`: no document).
    Whole(Option<Document>),
    /// Operations on the previous state.
    Delta(DocumentDelta),
}

impl DocumentRecord {
    fn version(&self) -> i64 {
        match self {
            DocumentRecord::Whole(doc) => doc.as_ref().map_or(0, |doc| doc.version),
            DocumentRecord::Delta(delta) => delta.version,
        }
    }
}

/// Follows code point `start` of the body the document had at `version` through every later
/// change, to where it lands in the body as it is now (in code points): a selection made on an
/// older version, located again after the person's edits moved it. `None` when no revision
/// recorded `version`, or when `check` refuses that version's body (it does not read the
/// selected text there). Each change moves the position exactly as its splice does: kept
/// before it, shifted after it, and at the start of the replaced text when it lay inside.
pub(crate) async fn follow_offset(
    repo: &mut Transaction,
    thread: &haico_store::ThreadId,
    version: i64,
    start: usize,
    check: impl Fn(&str) -> bool,
) -> Result<Option<usize>, WorkspaceError> {
    // Chains (a whole state and the edits after it), newest first, back to the one that
    // holds `version`.
    let mut chains: Vec<Vec<DocumentRecord>> = Vec::new();
    let mut rev = repo.history().last_revision(thread).await?;
    while rev > 0 {
        let records = repo
            .history()
            .panel_records(thread, "document", rev)
            .await?;
        let Some(first_rev) = records.first().map(|record| record.rev) else {
            break;
        };
        let mut chain = Vec::with_capacity(records.len());
        for record in records {
            chain.push(if record.whole {
                DocumentRecord::Whole(from_json(&record.data)?)
            } else {
                DocumentRecord::Delta(from_json(&record.data)?)
            });
        }
        let reaches = chain
            .first()
            .is_some_and(|first| first.version() <= version);
        chains.push(chain);
        if reaches {
            break;
        }
        rev = first_rev - 1;
    }
    let mut document = crate::workspace::document::empty_document();
    let mut at: Option<usize> = None;
    for record in chains.into_iter().rev().flatten() {
        match record {
            DocumentRecord::Whole(whole) => {
                let whole = whole.unwrap_or_else(crate::workspace::document::empty_document);
                if let Some(byte) = at {
                    at = Some(moved_through_rewrite(
                        &document.content,
                        &whole.content,
                        byte,
                    ));
                }
                document = whole;
            }
            DocumentRecord::Delta(delta) => {
                for op in &delta.ops {
                    if let (Some(byte), TextOp::Splice { head, tail, insert }) = (at, op) {
                        let len = document.content.len();
                        let cut_end = len.saturating_sub(*tail).max(*head);
                        at = Some(if byte < *head {
                            byte
                        } else if byte >= cut_end {
                            byte - cut_end + head + insert.len()
                        } else {
                            *head
                        });
                    }
                    apply_text(&mut document.content, op);
                }
                document.title = delta.title;
                document.version = delta.version;
            }
        }
        if at.is_none() && document.version == version {
            if !check(&document.content) {
                return Ok(None);
            }
            at = Some(crate::workspace::focus::byte_at(&document.content, start));
        }
    }
    Ok(at.map(|byte| {
        let mut byte = byte.min(document.content.len());
        while !document.content.is_char_boundary(byte) {
            byte -= 1;
        }
        document.content[..byte].chars().count()
    }))
}

/// Where byte `at` of `old` lands in `new` when one replaced the other whole.
fn moved_through_rewrite(old: &str, new: &str, at: usize) -> usize {
    let chars = old[..at.min(old.len())].chars().count();
    let moved = crate::workspace::focus::mapped_offset(old, new, chars);
    crate::workspace::focus::byte_at(new, moved)
}

/// The document at `from` and at `to` (`from <= to`), replaying the chain once when one
/// chain covers both.
pub(super) async fn documents_at(
    repo: &mut Transaction,
    thread: &haico_store::ThreadId,
    from: i64,
    to: i64,
) -> Result<(Option<Document>, Option<Document>), WorkspaceError> {
    let records = repo.history().panel_records(thread, "document", to).await?;
    let covers_from = records.first().is_none_or(|first| first.rev <= from);
    let mut older = if covers_from {
        None
    } else {
        Some(document_at(repo, thread, from).await?)
    };
    let mut document: Option<Document> = None;
    for record in records {
        if covers_from && older.is_none() && record.rev > from {
            older = Some(document.clone());
        }
        if record.whole {
            document = from_json(&record.data)?;
        } else {
            let delta: DocumentDelta = from_json(&record.data)?;
            let doc = document.get_or_insert_with(crate::workspace::document::empty_document);
            for op in &delta.ops {
                apply_text(&mut doc.content, op);
            }
            doc.title = delta.title;
            doc.version = delta.version;
        }
    }
    let older = match older {
        Some(older) => older,
        None => document.clone(),
    };
    Ok((older, document))
}

pub(super) async fn list_at<T>(
    repo: &mut Transaction,
    thread: &haico_store::ThreadId,
    panel: &str,
    rev: i64,
) -> Result<Vec<T>, WorkspaceError>
where
    T: serde::de::DeserializeOwned + HasId + Clone,
{
    let mut items: Vec<T> = Vec::new();
    for record in repo.history().panel_records(thread, panel, rev).await? {
        if record.whole {
            items = from_json(&record.data)?;
        } else {
            let ops: Vec<ListOp<T>> = from_json(&record.data)?;
            for op in &ops {
                apply_list(&mut items, op);
            }
        }
    }
    Ok(items)
}

pub(super) fn from_json<T: serde::de::DeserializeOwned>(data: &str) -> Result<T, WorkspaceError> {
    serde_json::from_str(data).map_err(|err| WorkspaceError::Store(err.into()))
}

/// The document mode and every suggestion of `thread` as they stood right after `rev`: the
/// mode's last record (`direct` before any) and the suggestions' list replayed like the plan.
pub(crate) async fn suggestions_at(
    repo: &mut Transaction,
    thread: &haico_store::ThreadId,
    rev: i64,
) -> Result<(haico_store::DocumentMode, Vec<haico_store::Suggestion>), WorkspaceError> {
    let records = repo
        .history()
        .panel_records(thread, "document_mode", rev)
        .await?;
    let mode = match records.last() {
        Some(record) => {
            haico_store::DocumentMode::from_stored(Some(&from_json::<String>(&record.data)?))
        }
        None => haico_store::DocumentMode::Direct,
    };
    let suggestions = list_at(repo, thread, "suggestions", rev).await?;
    Ok((mode, suggestions))
}
