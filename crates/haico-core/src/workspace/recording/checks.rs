//! What a recording may bring in: the data of each change, and each artifact, checked by the
//! same rules (and worded by the same texts) as every other path, so a recording cannot bring
//! in what no edit could make.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::*;
use crate::{
    workspace::artifacts::checked_recorded_chart, workspace::document::check_replacement,
    workspace::document::checked_title, workspace::objective::normalize_objective,
    workspace::plan::check_recorded_step, workspace::preferences::check_recorded_preference,
};
use haico_store::{Document, PlanStep, Preference, journal::DocumentDelta, journal::ListOp};

/// Checks that a change's data is what its panel keeps, by the workspace's own rules.
pub(super) fn check_change(change: &PanelChange) -> Result<(), WorkspaceError> {
    let data = change.data.clone();
    let fits = match (change.panel.as_str(), change.whole) {
        ("objective", true) => parse::<Option<String>>(data).and_then(|objective| {
            objective.map_or(Ok(()), |text| normalize_objective(&text).map(|_| ()))
        }),
        ("document", true) => parse::<Option<Document>>(data).and_then(|document| {
            document.map_or(Ok(()), |doc| {
                check_replacement(&doc.content, Some(&doc.title), None)
            })
        }),
        ("document", false) => parse::<DocumentDelta>(data)
            .and_then(|delta| checked_title(Some(&delta.title)).map(|_| ())),
        ("plan", true) => parse::<Vec<PlanStep>>(data).and_then(|steps| {
            in_whole(&steps).try_for_each(|(field, step)| check_recorded_step(step, &field))
        }),
        ("plan", false) => parse::<Vec<ListOp<PlanStep>>>(data).and_then(|ops| {
            in_ops(&ops).try_for_each(|(field, step)| check_recorded_step(step, &field))
        }),
        ("preferences", true) => parse::<Vec<Preference>>(data).and_then(|items| {
            in_whole(&items)
                .try_for_each(|(field, item)| check_recorded_preference(item, &format!("{field}.")))
        }),
        ("preferences", false) => parse::<Vec<ListOp<Preference>>>(data).and_then(|ops| {
            in_ops(&ops)
                .try_for_each(|(field, item)| check_recorded_preference(item, &format!("{field}.")))
        }),
        ("document_mode", true) => parse::<String>(data).and_then(|mode| {
            haico_store::DocumentMode::parse(&mode)
                .map(|_| ())
                .ok_or_else(|| {
                    WorkspaceError::invalid(format!(
                        "{mode:?} is not a document mode (direct or suggest)"
                    ))
                })
        }),
        // Read by their spelling first, so an unknown status or kind is named as such.
        ("suggestions", true) => parse::<Vec<Recorded>>(data.clone())
            .and_then(|items| items.iter().try_for_each(check_suggestion))
            .and_then(|()| parse::<Vec<haico_store::Suggestion>>(data).map(|_| ())),
        ("suggestions", false) => parse::<Vec<ListOp<Recorded>>>(data.clone())
            .and_then(|ops| in_ops(&ops).try_for_each(|(_, item)| check_suggestion(item)))
            .and_then(|()| parse::<Vec<ListOp<haico_store::Suggestion>>>(data).map(|_| ())),
        (panel, whole) => Err(WorkspaceError::invalid(format!(
            "a {} change of panel {panel:?} is not something history keeps",
            if whole { "whole" } else { "partial" }
        ))),
    };
    fits.map_err(|reason| WorkspaceError::invalid(format!("the {} change: {reason}", change.panel)))
}

/// Checks an artifact line: a chart, by the rule every new chart passes. Returns the payload
/// to store (as [`ArtifactsEdit::add_chart`](crate::workspace::ArtifactsEdit::add_chart) would have stored it).
pub(super) fn check_artifact(
    artifact_type: &str,
    title: Option<&str>,
    payload: &Value,
) -> Result<Value, WorkspaceError> {
    checked_recorded_chart(artifact_type, title, payload)
}

/// The items of a whole list, each with its place in the change's data (`data[2]`).
fn in_whole<T>(items: &[T]) -> impl Iterator<Item = (String, &T)> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| (format!("data[{i}]"), item))
}

/// The items list operations bring in, each with its place in the change's data
/// (`data[0].items[3]`, `data[1].item`).
fn in_ops<T>(ops: &[ListOp<T>]) -> impl Iterator<Item = (String, &T)> {
    ops.iter().enumerate().flat_map(|(j, op)| {
        let items: Vec<(String, &T)> = match op {
            ListOp::Insert { items, .. } | ListOp::Add { items } | ListOp::Set { items } => items
                .iter()
                .enumerate()
                .map(|(i, item)| (format!("data[{j}].items[{i}]"), item))
                .collect(),
            ListOp::Update { item } => vec![(format!("data[{j}].item"), item)],
            ListOp::Remove { .. } => Vec::new(),
        };
        items
    })
}

/// The data as the shape its panel keeps; the error says where it differs.
pub(super) fn parse<T: DeserializeOwned>(data: Value) -> Result<T, WorkspaceError> {
    serde_json::from_value(data).map_err(|err| WorkspaceError::invalid(err.to_string()))
}

/// A suggestion as a recording spells it: what [`check_suggestion`] reads of it.
#[derive(serde::Deserialize)]
struct Recorded {
    id: i64,
    status: String,
    kind: String,
    edits: Vec<haico_store::SuggestedEdit>,
}

/// A suggestion a recording brings in: a known status and kind, edits within the document's
/// limit.
fn check_suggestion(item: &Recorded) -> Result<(), WorkspaceError> {
    let bad = |what: String| WorkspaceError::invalid(format!("suggestion #{}: {what}", item.id));
    if haico_store::SuggestionStatus::parse(&item.status).is_none() {
        return Err(bad(format!("status {:?} is unknown", item.status)));
    }
    if haico_store::SuggestionKind::parse(&item.kind).is_none() {
        return Err(bad(format!("kind {:?} is unknown", item.kind)));
    }
    let max = crate::workspace::document::MAX_DOCUMENT_CHARS;
    for edit in &item.edits {
        for text in [&edit.old_text, &edit.new_text] {
            if text.len() > max && crate::workspace::rules::char_count(text) > max {
                return Err(bad(format!(
                    "a suggested edit is longer than {max} characters"
                )));
            }
        }
    }
    Ok(())
}
