//! Preferences: the user's hard and soft constraints, in the order they were recorded.
//!
//! The lock is the rule that matters here. On the agent path ([`Source::Agent`]) a locked
//! preference is never changed or removed: the condition is part of the SQL write itself, so a
//! person who locks a preference while an agent call is in flight wins, and the target is
//! reported as skipped. The user path ([`Source::User`]) ignores locks and is the only one
//! that may lock or unlock. Person's preference edits do not take the thread lock, so a lock
//! never waits behind an agent call.

use crate::{
    workspace::announce::Source, workspace::error::WorkspaceError, workspace::rules::Resolved,
    workspace::rules::optional_text, workspace::rules::plural, workspace::rules::position_of,
    workspace::rules::require_batch, workspace::rules::require_text,
    workspace::rules::resolve_indices,
};
use crate::{workspace::handles::PreferencesEdit, workspace::handles::ThreadPreferences};
use haico_store::{
    NewPreference, Preference, PreferencePatch, WriteOutcome, panels::PreferenceKind,
};

/// The longest preference title, in characters.
pub const MAX_TITLE_CHARS: usize = 300;
/// The longest preference subtitle, in characters.
pub const MAX_SUBTITLE_CHARS: usize = 1_000;

/// A preference to record, as given (checked by the operation that records it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreferenceDraft {
    /// The constraint in a few words.
    pub title: String,
    /// Optional detail; blank means none.
    pub subtitle: Option<String>,
    /// Hard or soft.
    pub kind: PreferenceKind,
}

/// A change of one preference, as given. `subtitle: Some(None)` (or a blank subtitle) clears
/// it; `locked` may only come from the user path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PreferenceChange {
    /// New title.
    pub title: Option<String>,
    /// New subtitle, or `Some(None)` to clear it.
    pub subtitle: Option<Option<String>>,
    /// New kind.
    pub kind: Option<PreferenceKind>,
    /// Lock or unlock.
    pub locked: Option<bool>,
}

/// What happened to one target of a lock-respecting batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetOutcome {
    /// The target's 1-based index when the call began.
    pub index: i64,
    /// Its title when the call began.
    pub title: String,
    /// Changed, skipped because locked, or gone meanwhile.
    pub outcome: WriteOutcome,
}

/// The outcome of a batch over 1-based indices.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PreferenceBatch {
    /// Every valid target, in the order given.
    pub targets: Vec<TargetOutcome>,
    /// The indices that name no preference, as given.
    pub out_of_range: Vec<i64>,
    /// Preferences in the list when the call began.
    pub len: usize,
}

/// A draft checked into what the store records; `field` names the item in errors.
fn checked_draft(draft: &PreferenceDraft, field: &str) -> Result<NewPreference, WorkspaceError> {
    Ok(NewPreference {
        title: require_text(&draft.title, &format!("{field}title"), MAX_TITLE_CHARS)?.to_string(),
        subtitle: optional_text(
            draft.subtitle.as_deref(),
            &format!("{field}subtitle"),
            MAX_SUBTITLE_CHARS,
        )?,
        kind: draft.kind,
    })
}

/// Checks a preference as a recording brings it in by the rules every edit keeps (a title, a
/// subtitle within its limit); `field` names it in errors (`data[0].`).
pub(super) fn check_recorded_preference(
    preference: &Preference,
    field: &str,
) -> Result<(), WorkspaceError> {
    let draft = PreferenceDraft {
        title: preference.title.clone(),
        subtitle: preference.subtitle.clone(),
        kind: preference.kind,
    };
    checked_draft(&draft, field).map(|_| ())
}

/// A change checked into a patch; `field` names the item in errors.
fn checked_change(
    change: &PreferenceChange,
    field: &str,
) -> Result<PreferencePatch, WorkspaceError> {
    Ok(PreferencePatch {
        title: change
            .title
            .as_deref()
            .map(|t| require_text(t, &format!("{field}title"), MAX_TITLE_CHARS).map(str::to_string))
            .transpose()?,
        subtitle: change
            .subtitle
            .as_ref()
            .map(|sub| {
                optional_text(
                    sub.as_deref(),
                    &format!("{field}subtitle"),
                    MAX_SUBTITLE_CHARS,
                )
            })
            .transpose()?,
        kind: change.kind,
        locked: change.locked,
    })
}

/// One change by id checked into a patch: it must change something.
fn checked_single_change(change: &PreferenceChange) -> Result<PreferencePatch, WorkspaceError> {
    if change.title.is_none()
        && change.subtitle.is_none()
        && change.kind.is_none()
        && change.locked.is_none()
    {
        return Err(WorkspaceError::invalid(
            "nothing to change: send title, subtitle, kind or locked",
        ));
    }
    checked_change(change, "")
}

/// "preference 4 not found in this thread".
fn preference_not_found(id: i64) -> WorkspaceError {
    WorkspaceError::NotFound(format!("preference {id} not found in this thread"))
}

impl PreferencesEdit<'_> {
    /// Records preferences, unlocked, in order; returns them with their ids.
    pub async fn add(
        &mut self,
        drafts: &[PreferenceDraft],
    ) -> Result<Vec<Preference>, WorkspaceError> {
        require_batch(drafts, "items")?;
        let items = drafts
            .iter()
            .enumerate()
            .map(|(i, draft)| checked_draft(draft, &format!("items[{i}].")))
            .collect::<Result<Vec<_>, _>>()?;
        let thread = self.edit.thread_id();
        Ok(self
            .edit
            .repo()
            .preferences()
            .add_preferences(&thread, &items)
            .await?)
    }

    /// Changes the preferences at these 1-based indices (on the agent path: never a locked
    /// one). Each index may appear once, and each change must change something.
    pub async fn change(
        &mut self,
        changes: &[(i64, PreferenceChange)],
    ) -> Result<PreferenceBatch, WorkspaceError> {
        require_batch(changes, "updates")?;
        let mut patches = Vec::with_capacity(changes.len());
        for (i, (index, change)) in changes.iter().enumerate() {
            if changes[..i].iter().any(|(earlier, _)| earlier == index) {
                return Err(WorkspaceError::invalid(format!(
                    "index {index} appears more than once in `updates`; combine its changes into one"
                )));
            }
            if change.title.is_none() && change.subtitle.is_none() && change.kind.is_none() {
                return Err(WorkspaceError::invalid(format!(
                    "`updates[{i}]` changes nothing: give a new title, subtitle or kind"
                )));
            }
            self.may_lock(change)?;
            patches.push(checked_change(change, &format!("updates[{i}]."))?);
        }
        let (thread, current, targets) = self
            .resolve_preferences(changes.iter().map(|(i, _)| *i))
            .await?;
        let respect_lock = self.respects_locks();
        let mut batch = PreferenceBatch {
            out_of_range: targets.out_of_range,
            len: current.len(),
            ..PreferenceBatch::default()
        };
        for ((index, _), patch) in changes.iter().zip(&patches) {
            let Some(target) = position_of(*index, current.len()).and_then(|p| current.get(p))
            else {
                continue;
            };
            let (outcome, _) = self
                .edit
                .repo()
                .preferences()
                .update_preference(&thread, target.id, patch, respect_lock)
                .await?;
            batch.targets.push(TargetOutcome {
                index: *index,
                title: target.title.clone(),
                outcome,
            });
        }
        Ok(batch)
    }

    /// Removes the preferences at these 1-based indices (on the agent path: never a locked
    /// one).
    pub async fn remove(&mut self, indices: &[i64]) -> Result<PreferenceBatch, WorkspaceError> {
        require_batch(indices, "indices")?;
        let (thread, current, targets) = self.resolve_preferences(indices.iter().copied()).await?;
        let respect_lock = self.respects_locks();
        let mut batch = PreferenceBatch {
            out_of_range: targets.out_of_range,
            len: current.len(),
            ..PreferenceBatch::default()
        };
        for position in targets.positions {
            let Some(target) = current.get(position) else {
                continue;
            };
            let outcome = self
                .edit
                .repo()
                .preferences()
                .delete_preference(&thread, target.id, respect_lock)
                .await?;
            batch.targets.push(TargetOutcome {
                index: i64::try_from(position + 1).unwrap_or(i64::MAX),
                title: target.title.clone(),
                outcome,
            });
        }
        Ok(batch)
    }

    /// Records one preference, locked if asked (the user path only).
    pub async fn create(
        &mut self,
        draft: &PreferenceDraft,
        locked: bool,
    ) -> Result<Preference, WorkspaceError> {
        let item = checked_draft(draft, "")?;
        if locked {
            self.may_lock(&PreferenceChange {
                locked: Some(true),
                ..PreferenceChange::default()
            })?;
        }
        let thread = self.edit.thread_id();
        let mut added = self
            .edit
            .repo()
            .preferences()
            .add_preferences(&thread, &[item])
            .await?;
        let Some(mut preference) = added.pop() else {
            return Err(WorkspaceError::invalid("nothing was recorded"));
        };
        if locked {
            let patch = PreferencePatch {
                locked: Some(true),
                ..PreferencePatch::default()
            };
            if let (_, Some(locked)) = self
                .edit
                .repo()
                .preferences()
                .update_preference(&thread, preference.id, &patch, false)
                .await?
            {
                preference = locked;
            }
        }
        Ok(preference)
    }

    /// Changes one preference by id; on the agent path a locked one is refused.
    pub async fn update(
        &mut self,
        id: i64,
        change: &PreferenceChange,
    ) -> Result<Preference, WorkspaceError> {
        let patch = checked_single_change(change)?;
        self.may_lock(change)?;
        let thread = self.edit.thread_id();
        let respect_lock = self.respects_locks();
        match self
            .edit
            .repo()
            .preferences()
            .update_preference(&thread, id, &patch, respect_lock)
            .await?
        {
            (WriteOutcome::Applied, Some(preference)) => Ok(preference),
            (WriteOutcome::Locked, _) => Err(locked_preference(id)),
            _ => Err(preference_not_found(id)),
        }
    }

    /// Deletes one preference by id; on the agent path a locked one is refused.
    pub async fn delete(&mut self, id: i64) -> Result<(), WorkspaceError> {
        let thread = self.edit.thread_id();
        let respect_lock = self.respects_locks();
        match self
            .edit
            .repo()
            .preferences()
            .delete_preference(&thread, id, respect_lock)
            .await?
        {
            WriteOutcome::Applied => Ok(()),
            WriteOutcome::Locked => Err(locked_preference(id)),
            WriteOutcome::Missing => Err(preference_not_found(id)),
        }
    }

    /// Whether this edit's writes leave locked preferences alone.
    fn respects_locks(&self) -> bool {
        self.edit.source() == Source::Agent
    }

    /// Only a person locks or unlocks.
    fn may_lock(&self, change: &PreferenceChange) -> Result<(), WorkspaceError> {
        if change.locked.is_some() && self.edit.source() != Source::User {
            return Err(WorkspaceError::invalid(
                "only the user can lock or unlock a preference",
            ));
        }
        Ok(())
    }

    /// The thread id, the list and `indices` resolved against it.
    async fn resolve_preferences(
        &mut self,
        indices: impl IntoIterator<Item = i64>,
    ) -> Result<(haico_store::ThreadId, Vec<Preference>, Resolved), WorkspaceError> {
        let thread = self.edit.thread_id();
        let current = self
            .edit
            .repo()
            .preferences()
            .list_preferences(&thread)
            .await?;
        let targets = resolve_indices(indices, current.len());
        Ok((thread, current, targets))
    }
}

/// "preference 4 is locked: …".
fn locked_preference(id: i64) -> WorkspaceError {
    WorkspaceError::invalid(format!(
        "preference {id} is locked by the user; ask the user to unlock it first"
    ))
}

impl ThreadPreferences<'_> {
    /// A person records a preference (locked if asked).
    pub async fn create(
        &self,
        draft: &PreferenceDraft,
        locked: bool,
    ) -> Result<Preference, WorkspaceError> {
        checked_draft(draft, "")?;
        let mut edit = self.workspaces.edit(self.thread, Source::User).await?;
        let outcome = edit.preferences().create(draft, locked).await;
        self.workspaces
            .settle(edit, outcome, |preference| {
                format!("added the preference \"{}\"", preference.title)
            })
            .await
    }

    /// A person changes, locks or unlocks a preference (locks do not stop a person).
    pub async fn update(
        &self,
        id: i64,
        change: &PreferenceChange,
    ) -> Result<Preference, WorkspaceError> {
        checked_single_change(change)?;
        let mut edit = self.workspaces.edit(self.thread, Source::User).await?;
        let outcome = edit.preferences().update(id, change).await;
        let only_lock =
            change.title.is_none() && change.subtitle.is_none() && change.kind.is_none();
        self.workspaces
            .settle(edit, outcome, |preference| {
                let verb = match change.locked {
                    Some(true) if only_lock => "locked",
                    Some(false) if only_lock => "unlocked",
                    _ => "changed",
                };
                format!("{verb} the preference \"{}\"", preference.title)
            })
            .await
    }

    /// A person removes a preference, locked or not.
    pub async fn delete(&self, id: i64) -> Result<(), WorkspaceError> {
        let mut edit = self.workspaces.edit(self.thread, Source::User).await?;
        let outcome = edit.preferences().delete(id).await;
        self.workspaces
            .settle(edit, outcome, |()| format!("removed preference {id}"))
            .await
    }

    /// The preferences, in order.
    pub async fn list(&self) -> Result<Vec<Preference>, WorkspaceError> {
        {
            let mut view = self.workspaces.view(self.thread).await?;
            let found = view.preferences().await;
            view.settle(found).await
        }
    }
}

/// The preferences as `#N [kind] title — subtitle` lines, ` (locked)` after locked ones: what
/// `list_preferences` answers and the agent's prompt shows.
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

/// "1 preference", "3 preferences".
pub fn preferences_count(n: usize) -> String {
    plural(n, "preference")
}
