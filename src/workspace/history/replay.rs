//! The workspace at any revision, rebuilt from the nearest whole state and the records after it.

use crate::store::{
    Document, PlanStep, Preference, Workspace, WorkspaceRepository,
    journal::{DocumentDelta, HasId, ListOp, apply_list, apply_text},
};
use crate::workspace::WorkspaceError;

/// Rebuilds the workspace of `thread` as it stood right after revision `rev` (0: empty).
pub(crate) async fn workspace_at(
    repo: &mut WorkspaceRepository,
    thread: &str,
    rev: i64,
) -> Result<Workspace, WorkspaceError> {
    Ok(Workspace {
        objective: objective_at(repo, thread, rev).await?,
        document: document_at(repo, thread, rev).await?,
        plan: list_at::<PlanStep>(repo, thread, "plan", rev).await?,
        preferences: list_at::<Preference>(repo, thread, "preferences", rev).await?,
        artifacts: repo.artifacts_at(thread, rev).await?,
    })
}

pub(super) async fn objective_at(
    repo: &mut WorkspaceRepository,
    thread: &str,
    rev: i64,
) -> Result<Option<String>, WorkspaceError> {
    let records = repo.panel_records(thread, "objective", rev).await?;
    match records.last() {
        Some(record) => from_json(&record.data),
        None => Ok(None),
    }
}

/// The document at `rev`: its last whole state, then every recorded edit after it.
pub(crate) async fn document_at(
    repo: &mut WorkspaceRepository,
    thread: &str,
    rev: i64,
) -> Result<Option<Document>, WorkspaceError> {
    let mut document: Option<Document> = None;
    for record in repo.panel_records(thread, "document", rev).await? {
        if record.whole {
            document = from_json(&record.data)?;
        } else {
            let delta: DocumentDelta = from_json(&record.data)?;
            let doc = document.get_or_insert_with(crate::workspace::empty_document);
            for op in &delta.ops {
                apply_text(&mut doc.content, op);
            }
            doc.title = delta.title;
            doc.version = delta.version;
        }
    }
    Ok(document)
}

/// The document at `from` and at `to` (`from <= to`), replaying the chain once when one
/// chain covers both.
pub(super) async fn documents_at(
    repo: &mut WorkspaceRepository,
    thread: &str,
    from: i64,
    to: i64,
) -> Result<(Option<Document>, Option<Document>), WorkspaceError> {
    let records = repo.panel_records(thread, "document", to).await?;
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
            let doc = document.get_or_insert_with(crate::workspace::empty_document);
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
    repo: &mut WorkspaceRepository,
    thread: &str,
    panel: &str,
    rev: i64,
) -> Result<Vec<T>, WorkspaceError>
where
    T: serde::de::DeserializeOwned + HasId + Clone,
{
    let mut items: Vec<T> = Vec::new();
    for record in repo.panel_records(thread, panel, rev).await? {
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
    repo: &mut WorkspaceRepository,
    thread: &str,
    rev: i64,
) -> Result<(String, Vec<crate::store::Suggestion>), WorkspaceError> {
    let records = repo.panel_records(thread, "document_mode", rev).await?;
    let mode = match records.last() {
        Some(record) => from_json(&record.data)?,
        None => crate::workspace::DocumentMode::Direct.as_str().to_string(),
    };
    let suggestions = list_at(repo, thread, "suggestions", rev).await?;
    Ok((mode, suggestions))
}
