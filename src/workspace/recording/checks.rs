//! What a recording may bring in: the data of each change within the limits every other
//! path keeps.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::*;
use crate::store::{
    Document, PlanStep, Preference,
    journal::{DocumentDelta, ListOp},
};

/// Checks that a change's data is what its panel keeps, within the limits the workspace's
/// rules set for every other path: a recording cannot bring in what no edit could make.
pub(super) fn check_change(change: &PanelChange) -> Result<(), String> {
    let data = change.data.clone();
    let fits =
        match (change.panel.as_str(), change.whole) {
            ("objective", true) => parse::<Option<String>>(data).and_then(|objective| {
                within(
                    objective.as_deref(),
                    "the objective",
                    crate::workspace::MAX_OBJECTIVE_CHARS,
                )
            }),
            ("document", true) => parse::<Option<Document>>(data).and_then(|document| {
                document.map_or(Ok(()), |doc| {
                    within(
                        Some(&doc.title),
                        "the title",
                        crate::workspace::MAX_DOCUMENT_TITLE_CHARS,
                    )?;
                    within(
                        Some(&doc.content),
                        "the document",
                        crate::workspace::MAX_DOCUMENT_CHARS,
                    )
                })
            }),
            ("document", false) => parse::<DocumentDelta>(data).and_then(|delta| {
                within(
                    Some(&delta.title),
                    "the title",
                    crate::workspace::MAX_DOCUMENT_TITLE_CHARS,
                )
            }),
            ("plan", true) => parse::<Vec<PlanStep>>(data).and_then(|steps| check_steps(&steps)),
            ("plan", false) => parse::<Vec<ListOp<PlanStep>>>(data)
                .and_then(|ops| ops.iter().try_for_each(|op| check_steps(op_items(op)))),
            ("preferences", true) => {
                parse::<Vec<Preference>>(data).and_then(|items| check_preferences(&items))
            }
            ("preferences", false) => parse::<Vec<ListOp<Preference>>>(data).and_then(|ops| {
                ops.iter()
                    .try_for_each(|op| check_preferences(op_items(op)))
            }),
            ("document_mode", true) => parse::<String>(data).and_then(|mode| {
                crate::workspace::DocumentMode::parse(&mode)
                    .map(|_| ())
                    .ok_or_else(|| format!("{mode:?} is not a document mode (direct or suggest)"))
            }),
            ("suggestions", true) => parse::<Vec<crate::store::Suggestion>>(data)
                .and_then(|items| check_suggestions(&items)),
            ("suggestions", false) => parse::<Vec<ListOp<crate::store::Suggestion>>>(data)
                .and_then(|ops| {
                    ops.iter()
                        .try_for_each(|op| check_suggestions(op_items(op)))
                }),
            (panel, whole) => Err(format!(
                "a {} change of panel {panel:?} is not something history keeps",
                if whole { "whole" } else { "partial" }
            )),
        };
    fits.map_err(|reason| format!("the {} change: {reason}", change.panel))
}

/// Fails when `text` is longer than `max` characters.
pub(super) fn within(text: Option<&str>, what: &str, max: usize) -> Result<(), String> {
    match text {
        Some(text) if text.len() > max && crate::workspace::rules::char_count(text) > max => {
            Err(format!("{what} is longer than {max} characters"))
        }
        _ => Ok(()),
    }
}

/// The items a list operation brings in.
pub(super) fn op_items<T>(op: &ListOp<T>) -> &[T] {
    match op {
        ListOp::Insert { items, .. } | ListOp::Add { items } | ListOp::Set { items } => items,
        ListOp::Update { item } => std::slice::from_ref(item),
        ListOp::Remove { .. } => &[],
    }
}

pub(super) fn check_steps(steps: &[PlanStep]) -> Result<(), String> {
    steps.iter().try_for_each(|step| {
        if step.text.trim().is_empty() {
            return Err(format!("step {} has no text", step.id));
        }
        within(Some(&step.text), "a step", crate::workspace::MAX_STEP_CHARS)?;
        if !(0..=crate::workspace::MAX_DEPTH).contains(&step.depth) {
            return Err(format!(
                "step {} has depth {}; the plan nests at most {} levels",
                step.id,
                step.depth,
                crate::workspace::MAX_DEPTH
            ));
        }
        Ok(())
    })
}

pub(super) fn check_preferences(items: &[Preference]) -> Result<(), String> {
    items.iter().try_for_each(|preference| {
        within(
            Some(&preference.title),
            "a preference's title",
            crate::workspace::MAX_TITLE_CHARS,
        )?;
        within(
            preference.subtitle.as_deref(),
            "a preference's subtitle",
            crate::workspace::MAX_SUBTITLE_CHARS,
        )
    })
}

pub(super) fn parse<T: DeserializeOwned>(data: Value) -> Result<T, String> {
    serde_json::from_value(data).map_err(|err| err.to_string())
}

/// Suggestions a recording brings in: a known status and kind, edits within the document's
/// limit.
fn check_suggestions(items: &[crate::store::Suggestion]) -> Result<(), String> {
    for item in items {
        if crate::workspace::SuggestionStatus::parse(&item.status).is_none() {
            return Err(format!(
                "suggestion #{}: status {:?} is unknown",
                item.id, item.status
            ));
        }
        if !matches!(item.kind.as_str(), "edit" | "append" | "replace") {
            return Err(format!(
                "suggestion #{}: kind {:?} is unknown",
                item.id, item.kind
            ));
        }
        for edit in &item.edits {
            within(
                Some(&edit.old_text),
                "a suggested edit",
                crate::workspace::MAX_DOCUMENT_CHARS,
            )?;
            within(
                Some(&edit.new_text),
                "a suggested edit",
                crate::workspace::MAX_DOCUMENT_CHARS,
            )?;
        }
    }
    Ok(())
}
