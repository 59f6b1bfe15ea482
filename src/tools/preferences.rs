//! Preference tools: the user's hard and soft constraints (the top-left panel).
//!
//! The agent may record, edit and remove preferences, but never a locked one: those writes
//! carry the lock condition in their SQL, and a locked target is skipped and reported so the
//! agent can ask the user to unlock it.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{
    ToolError, ToolResult,
    checks::{
        check_length, describe_out_of_range, plural, require_batch, require_text, resolve_indices,
    },
    workspace_tool, workspace_tools,
};
use crate::{
    ThreadId,
    store::{
        NewPreference, Preference, PreferenceKind, PreferencePatch, WorkspaceRepository,
        WriteOutcome,
    },
};

/// The longest preference title, in characters.
pub const MAX_TITLE_CHARS: usize = 300;
/// The longest preference subtitle, in characters.
pub const MAX_SUBTITLE_CHARS: usize = 1_000;

/// Keeps a thread's preferences.
pub struct PreferenceTools {
    thread_id: ThreadId,
}

impl PreferenceTools {
    /// The preference tools of one thread.
    pub fn new(thread_id: ThreadId) -> Self {
        Self { thread_id }
    }
}

fn soft() -> PreferenceKind {
    PreferenceKind::Soft
}

/// One preference to record.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreferenceInput {
    /// The constraint in a few words, e.g. "Budget under 2,000 EUR".
    pub title: String,
    /// Optional detail or the user's reason.
    #[serde(default)]
    pub subtitle: Option<String>,
    /// "hard" for a constraint the solution must meet, "soft" (the default) for a wish to weigh.
    #[serde(default = "soft")]
    pub kind: PreferenceKind,
}

/// Arguments of `add_preferences`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddPreferencesArgs {
    /// The preferences to record, in order.
    pub items: Vec<PreferenceInput>,
}

/// One edit for `update_preferences`; fields left out stay as they are.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreferenceUpdate {
    /// 1-based index of the preference, as numbered in the current list.
    pub index: i64,
    /// New title.
    #[serde(default)]
    pub title: Option<String>,
    /// New subtitle; an empty string removes the subtitle.
    #[serde(default)]
    pub subtitle: Option<String>,
    /// New kind: "hard" or "soft".
    #[serde(default)]
    pub kind: Option<PreferenceKind>,
}

/// Arguments of `update_preferences`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdatePreferencesArgs {
    /// The edits to apply.
    pub updates: Vec<PreferenceUpdate>,
}

/// Arguments of `remove_preferences`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemovePreferencesArgs {
    /// 1-based indices of the preferences to remove, as numbered in the current list.
    pub indices: Vec<i64>,
}

#[workspace_tools]
impl PreferenceTools {
    #[workspace_tool(
        name = "add_preferences",
        description = "Record preferences the user stated: hard constraints the solution must meet \
                       or soft wishes to weigh. Pass every new preference in one list."
    )]
    async fn add_preferences(
        &self,
        repo: &mut WorkspaceRepository,
        args: AddPreferencesArgs,
    ) -> ToolResult {
        require_batch(&args.items, "items")?;
        let mut items = Vec::with_capacity(args.items.len());
        for (i, item) in args.items.iter().enumerate() {
            let title = require_text(&item.title, &format!("items[{i}].title"), MAX_TITLE_CHARS)?;
            let subtitle =
                optional_subtitle(item.subtitle.as_deref(), &format!("items[{i}].subtitle"))?;
            items.push(NewPreference {
                title: title.to_string(),
                subtitle,
                kind: item.kind,
            });
        }
        let added = repo
            .add_preferences(self.thread_id.as_str(), &items)
            .await?;
        Ok(format!("recorded {}", plural(added.len(), "preference")).into())
    }

    #[workspace_tool(
        name = "update_preferences",
        description = "Change the title, subtitle or kind of preferences by their 1-based indices. \
                       Locked preferences are skipped and reported: only the user can change them, \
                       so ask the user to unlock one first."
    )]
    async fn update_preferences(
        &self,
        repo: &mut WorkspaceRepository,
        args: UpdatePreferencesArgs,
    ) -> ToolResult {
        require_batch(&args.updates, "updates")?;
        let mut patches = Vec::with_capacity(args.updates.len());
        for (i, update) in args.updates.iter().enumerate() {
            if args.updates[..i].iter().any(|u| u.index == update.index) {
                return Err(ToolError::invalid(format!(
                    "index {} appears more than once in `updates`; combine its changes into one",
                    update.index
                )));
            }
            if update.title.is_none() && update.subtitle.is_none() && update.kind.is_none() {
                return Err(ToolError::invalid(format!(
                    "`updates[{i}]` changes nothing: give a new title, subtitle or kind"
                )));
            }
            let title = match &update.title {
                Some(title) => Some(
                    require_text(title, &format!("updates[{i}].title"), MAX_TITLE_CHARS)?
                        .to_string(),
                ),
                None => None,
            };
            let subtitle = match &update.subtitle {
                Some(sub) => Some(optional_subtitle(
                    Some(sub),
                    &format!("updates[{i}].subtitle"),
                )?),
                None => None,
            };
            patches.push(PreferencePatch {
                title,
                subtitle,
                kind: update.kind,
                locked: None,
            });
        }

        let thread = self.thread_id.as_str();
        let current = repo.list_preferences(thread).await?;
        let targets = resolve_indices(args.updates.iter().map(|u| u.index), current.len());
        let mut report = Report::default();
        for (update, patch) in args.updates.iter().zip(&patches) {
            let Some(target) = target_of(&current, update.index) else {
                continue;
            };
            let (outcome, _) = repo
                .update_preference(thread, target.id, patch, true)
                .await?;
            report.record(update.index, target, outcome);
        }
        Ok(report
            .finish("updated", "changed", &targets.out_of_range, current.len())
            .into())
    }

    #[workspace_tool(
        name = "remove_preferences",
        description = "Remove preferences by their 1-based indices as numbered in the current list. \
                       Only do this when the user asks to drop a preference. Locked preferences are \
                       skipped and reported."
    )]
    async fn remove_preferences(
        &self,
        repo: &mut WorkspaceRepository,
        args: RemovePreferencesArgs,
    ) -> ToolResult {
        require_batch(&args.indices, "indices")?;
        let thread = self.thread_id.as_str();
        let current = repo.list_preferences(thread).await?;
        let targets = resolve_indices(args.indices.iter().copied(), current.len());
        let mut report = Report::default();
        for &position in &targets.positions {
            let index = i64::try_from(position + 1).unwrap_or(i64::MAX);
            let Some(target) = current.get(position) else {
                continue;
            };
            let outcome = repo.delete_preference(thread, target.id, true).await?;
            report.record(index, target, outcome);
        }
        Ok(report
            .finish("removed", "removed", &targets.out_of_range, current.len())
            .into())
    }

    #[workspace_tool(
        name = "list_preferences",
        read_only,
        description = "Show the current preferences with their 1-based indices, kinds and lock \
                       marks. Rarely needed: they are already in your instructions."
    )]
    async fn list_preferences(&self, repo: &mut WorkspaceRepository) -> ToolResult {
        let preferences = repo.list_preferences(self.thread_id.as_str()).await?;
        Ok(render_preferences(&preferences).into())
    }
}

/// The preferences as `#N [kind] title — subtitle` lines, ` (locked)` after locked ones; the
/// same text the agent's prompt shows.
pub fn render_preferences(preferences: &[Preference]) -> String {
    if preferences.is_empty() {
        return "(no preferences recorded yet)".to_string();
    }
    preferences
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut line = format!("#{} [{}] {}", i + 1, p.kind.as_str(), p.title);
            if let Some(sub) = p.subtitle.as_deref().filter(|s| !s.is_empty()) {
                line.push_str(" — ");
                line.push_str(sub);
            }
            if p.locked {
                line.push_str(" (locked)");
            }
            line
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A subtitle as given: blank means none.
fn optional_subtitle(subtitle: Option<&str>, field: &str) -> Result<Option<String>, ToolError> {
    match subtitle.map(str::trim) {
        Some(sub) if !sub.is_empty() => {
            check_length(sub, field, MAX_SUBTITLE_CHARS)?;
            Ok(Some(sub.to_string()))
        }
        _ => Ok(None),
    }
}

fn target_of(current: &[Preference], index: i64) -> Option<&Preference> {
    usize::try_from(index)
        .ok()
        .filter(|i| *i >= 1)
        .and_then(|i| current.get(i - 1))
}

/// Collects what a lock-respecting batch did, for its summary.
#[derive(Default)]
struct Report {
    applied: Vec<String>,
    locked: Vec<String>,
    vanished: Vec<String>,
}

impl Report {
    fn record(&mut self, index: i64, target: &Preference, outcome: WriteOutcome) {
        let label = format!("#{index} \"{}\"", target.title);
        match outcome {
            WriteOutcome::Applied => self.applied.push(label),
            WriteOutcome::Locked => self.locked.push(label),
            WriteOutcome::Missing => self.vanished.push(label),
        }
    }

    fn finish(self, done: &str, verb: &str, out_of_range: &[i64], len: usize) -> String {
        let mut parts = Vec::new();
        if self.applied.is_empty() {
            parts.push("no matching preferences found".to_string());
        } else {
            parts.push(format!("{done} {}", self.applied.join(", ")));
        }
        if !self.locked.is_empty() {
            parts.push(format!(
                "skipped {}: locked by the user, so it cannot be {verb}; ask the user to unlock it first",
                self.locked.join(", ")
            ));
        }
        if !self.vanished.is_empty() {
            parts.push(format!(
                "skipped {}: it was removed meanwhile",
                self.vanished.join(", ")
            ));
        }
        if !out_of_range.is_empty() {
            parts.push(describe_out_of_range(
                out_of_range,
                len,
                "the list has",
                "preference",
            ));
        }
        parts.join("; ")
    }
}
