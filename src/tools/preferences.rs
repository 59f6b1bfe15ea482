//! Preference tools: the user's hard and soft constraints (the top-left panel).
//!
//! The agent may record, edit and remove preferences, but never a locked one (the rule is the
//! workspace's: [`crate::workspace::preferences`]); a locked target is skipped and reported so
//! the agent can ask the user to unlock it.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::{
    tools::output::ToolResult, tools::summary::and_list, tools::summary::nothing_changed,
    tools::summary::out_of_range, tools::summary::skipped, tools::summary::skipped_out_of_range,
};

use haico_core::{
    workspace::Edit, workspace::MAX_SUBTITLE_CHARS, workspace::MAX_TITLE_CHARS,
    workspace::PreferenceDraft, workspace::View, workspace::preferences::PreferenceBatch,
    workspace::preferences::PreferenceChange, workspace::preferences::preferences_count,
    workspace::preferences::render_preferences, workspace::rules::MAX_BATCH,
};
use haico_macros::{workspace_tool, workspace_tools};
use haico_store::{WriteOutcome, panels::PreferenceKind};

/// Keeps the preferences.
pub struct PreferenceTools;

fn soft() -> PreferenceKind {
    PreferenceKind::Soft
}

/// One preference to record.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreferenceInput {
    /// The preference in a few words, e.g. "Budget under 2,000 EUR".
    #[schemars(length(min = 1, max = MAX_TITLE_CHARS))]
    pub title: String,
    /// Optional detail or the user's reason.
    #[serde(default)]
    #[schemars(length(max = MAX_SUBTITLE_CHARS))]
    pub subtitle: Option<String>,
    /// hard: the solution must meet it; soft: a wish to weigh.
    #[serde(default = "soft")]
    pub kind: PreferenceKind,
}

/// Arguments of `add_preferences`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddPreferencesArgs {
    /// The preferences to record.
    #[schemars(length(min = 1, max = MAX_BATCH))]
    pub items: Vec<PreferenceInput>,
}

/// One edit for `update_preferences`; fields left out stay as they are.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreferenceUpdate {
    /// Number of the preference, as in the current list.
    #[schemars(range(min = 1))]
    pub index: i64,
    /// New title.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_TITLE_CHARS))]
    pub title: Option<String>,
    /// New detail; an empty string removes it.
    #[serde(default)]
    #[schemars(length(max = MAX_SUBTITLE_CHARS))]
    pub subtitle: Option<String>,
    /// New kind.
    #[serde(default)]
    pub kind: Option<PreferenceKind>,
}

/// Arguments of `update_preferences`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdatePreferencesArgs {
    /// The changes; fields left out stay as they are.
    #[schemars(length(min = 1, max = MAX_BATCH))]
    pub updates: Vec<PreferenceUpdate>,
}

/// Arguments of `remove_preferences`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemovePreferencesArgs {
    /// Numbers of the preferences, as in the current list.
    #[schemars(length(min = 1, max = MAX_BATCH), inner(range(min = 1)))]
    pub indices: Vec<i64>,
}

#[workspace_tools]
impl PreferenceTools {
    #[workspace_tool(
        name = "add_preferences",
        description = "Record the user's preferences: hard ones the solution must meet, soft \
                       ones to weigh."
    )]
    async fn add_preferences(&self, edit: &mut Edit, args: AddPreferencesArgs) -> ToolResult {
        let drafts: Vec<PreferenceDraft> = args
            .items
            .into_iter()
            .map(|item| PreferenceDraft {
                title: item.title,
                subtitle: item.subtitle,
                kind: item.kind,
            })
            .collect();
        let added = edit.preferences().add(&drafts).await?;
        Ok(format!("recorded {}", preferences_count(added.len())).into())
    }

    #[workspace_tool(
        name = "update_preferences",
        description = "Change preferences by their numbers; a locked one only the user can \
                       change."
    )]
    async fn update_preferences(&self, edit: &mut Edit, args: UpdatePreferencesArgs) -> ToolResult {
        let changes: Vec<(i64, PreferenceChange)> = args
            .updates
            .into_iter()
            .map(|update| {
                (
                    update.index,
                    PreferenceChange {
                        title: update.title,
                        subtitle: update.subtitle.map(Some),
                        kind: update.kind,
                        locked: None,
                    },
                )
            })
            .collect();
        let batch = edit.preferences().change(&changes).await?;
        Ok(report(&batch, "updated").into())
    }

    #[workspace_tool(
        name = "remove_preferences",
        description = "Remove preferences by their numbers, only when the user asks; a locked \
                       one only the user can remove."
    )]
    async fn remove_preferences(&self, edit: &mut Edit, args: RemovePreferencesArgs) -> ToolResult {
        let batch = edit.preferences().remove(&args.indices).await?;
        Ok(report(&batch, "removed").into())
    }

    #[workspace_tool(
        name = "list_preferences",
        read_only,
        description = "Show the numbered preferences (they are already in your instructions)."
    )]
    async fn list_preferences(&self, view: &mut View) -> ToolResult {
        Ok(render_preferences(&view.preferences().await?).into())
    }
}

/// The summary of a lock-respecting batch: what was done first, then each target that was
/// not and why (locked by the user, removed meanwhile, out of range). When nothing was done
/// it starts with `nothing changed: `, so the model does not take the call for done.
fn report(batch: &PreferenceBatch, done: &str) -> String {
    let labels = |outcome: WriteOutcome| -> Vec<String> {
        batch
            .targets
            .iter()
            .filter(|target| target.outcome == outcome)
            .map(|target| format!("#{} \"{}\"", target.index, target.title))
            .collect()
    };
    let (applied, locked, vanished) = (
        labels(WriteOutcome::Applied),
        labels(WriteOutcome::Locked),
        labels(WriteOutcome::Missing),
    );
    let out = &batch.out_of_range;
    let (list, len, noun) = ("the list", batch.len, "preference");
    let unlock = |targets: &[String]| {
        let them = if targets.len() == 1 { "it" } else { "them" };
        format!("locked by the user — ask the person to unlock {them}")
    };
    if applied.is_empty() {
        let mut reasons = Vec::new();
        if !locked.is_empty() {
            let verb = if locked.len() == 1 { "is" } else { "are" };
            reasons.push(format!("{} {verb} {}", and_list(&locked), unlock(&locked)));
        }
        if !vanished.is_empty() {
            let verb = if vanished.len() == 1 { "was" } else { "were" };
            reasons.push(format!("{} {verb} removed meanwhile", and_list(&vanished)));
        }
        if !out.is_empty() {
            reasons.push(out_of_range(out, list, len, noun));
            reasons.push("use the numbers of the current list".to_string());
        }
        if reasons.is_empty() {
            reasons.push("no preference matched".to_string());
        }
        return nothing_changed(reasons);
    }
    let mut parts = vec![format!("{done} {}", applied.join(", "))];
    if !locked.is_empty() {
        parts.push(skipped(and_list(&locked), unlock(&locked)));
    }
    if !vanished.is_empty() {
        parts.push(skipped(and_list(&vanished), "removed meanwhile"));
    }
    if !out.is_empty() {
        parts.push(skipped_out_of_range(out, list, len, noun));
    }
    parts.join("; ")
}
