//! Setting panels back: restoring a revision, undoing an agent turn.

use std::collections::BTreeSet;

use super::*;
use crate::{
    workspace::edit::Edit, workspace::error::WorkspaceError, workspace::revision::ChangeNote,
};
use haico_store::{Document, Revision, Workspace, panels::Panel};

/// The panels a restore sets back when it names none.
pub const RESTORABLE: [Panel; 4] = [
    Panel::Objective,
    Panel::Document,
    Panel::Plan,
    Panel::Preferences,
];

impl Edit {
    /// Sets the listed panels to their state in `target`, writing only those that differ;
    /// returns the panels written. Preference and step ids are kept, so the result reads like
    /// the state it came from.
    async fn set_panels(
        &mut self,
        target: &Workspace,
        panels: &[Panel],
    ) -> Result<Vec<Panel>, WorkspaceError> {
        self.lock().await?;
        let thread = self.thread_id();
        let current = self.read().snapshot().await?;
        let mut written = Vec::new();
        for panel in panels {
            let differs = match panel {
                Panel::Objective => current.objective != target.objective,
                Panel::Document => {
                    let text = |d: &Option<Document>| {
                        d.as_ref().map(|d| (d.title.clone(), d.content.clone()))
                    };
                    text(&current.document) != text(&target.document)
                }
                Panel::Plan => current.plan != target.plan,
                Panel::Preferences => current.preferences != target.preferences,
                Panel::Artifacts | Panel::Suggestions => false,
            };
            if !differs {
                continue;
            }
            let repo = self.repo();
            match panel {
                Panel::Objective => match &target.objective {
                    Some(objective) => repo.objectives().set_objective(&thread, objective).await?,
                    None => repo.objectives().clear_objective(&thread).await?,
                },
                Panel::Document => {
                    let document = target
                        .document
                        .as_ref()
                        .map(|d| (d.title.as_str(), d.content.as_str()));
                    repo.documents().set_document(&thread, document).await?;
                }
                Panel::Plan => repo.plan().replace_plan(&thread, &target.plan).await?,
                Panel::Preferences => {
                    repo.preferences()
                        .replace_preferences(&thread, &target.preferences)
                        .await?;
                }
                Panel::Artifacts | Panel::Suggestions => {}
            }
            written.push(*panel);
        }
        Ok(written)
    }
}

/// The panels a restore names, checked: artifacts are records of what was made and are never
/// set back.
pub fn restorable_panels(names: Option<&[String]>) -> Result<Vec<Panel>, WorkspaceError> {
    let Some(names) = names else {
        return Ok(RESTORABLE.to_vec());
    };
    if names.is_empty() {
        return Err(WorkspaceError::invalid(
            "`panels` is empty: name the panels to restore, or leave it out for all of them",
        ));
    }
    let mut panels = Vec::new();
    for name in names {
        match Panel::parse(name) {
            Some(Panel::Artifacts | Panel::Suggestions) => {
                return Err(WorkspaceError::invalid(format!(
                    "{name} are records of what was made and are never restored: restore \
                     objective, document, plan or preferences"
                )));
            }
            Some(panel) => {
                if !panels.contains(&panel) {
                    panels.push(panel);
                }
            }
            None => {
                return Err(WorkspaceError::invalid(format!(
                    "`panels` names {name:?}: use objective, document, plan or preferences"
                )));
            }
        }
    }
    Ok(panels)
}

/// "objective, document and plan".
pub(super) fn list_panels(panels: &[Panel]) -> String {
    let names: Vec<&str> = panels.iter().map(|p| p.as_str()).collect();
    match names.as_slice() {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

impl crate::workspace::service::Workspaces {
    /// A person sets panels (all four unless named) back to their state at `rev`, as one new
    /// revision; artifacts are never removed. Returns the revision the workspace is at now and
    /// the workspace.
    pub async fn restore(
        &self,
        thread: &haico_store::ThreadId,
        rev: i64,
        panels: Option<&[String]>,
    ) -> Result<(i64, Workspace), WorkspaceError> {
        let panels = restorable_panels(panels)?;
        let mut edit = self
            .edit(thread, crate::workspace::announce::Source::User)
            .await?;
        let outcome = async {
            edit.lock().await?;
            let target = edit.read().snapshot_at(rev).await?;
            edit.set_panels(&target, &panels).await
        }
        .await;
        self.finish_rewrite(thread, edit, outcome, |written| ChangeNote {
            summary: format!("restored the {} as of revision {rev}", list_panels(written)),
            restored_from: Some(rev),
            ..ChangeNote::default()
        })
        .await
    }

    /// A person undoes the workspace changes of agent turn `turn`, as one new revision. When a
    /// later change touched a panel the turn changed, nothing changes and the answer is
    /// [`WorkspaceError::Conflicts`] naming them.
    pub async fn revert_turn(
        &self,
        thread: &haico_store::ThreadId,
        turn: i64,
    ) -> Result<(i64, Workspace), WorkspaceError> {
        let mut edit = self
            .edit(thread, crate::workspace::announce::Source::User)
            .await?;
        let outcome = async {
            edit.lock().await?;
            let turns = edit.turn_index();
            if turn < 1 || turn > turns {
                return Err(WorkspaceError::NotFound(format!(
                    "turn {turn} does not exist: the thread has had {turns} turns"
                )));
            }
            let thread_id = edit.thread_id();
            let made = edit
                .repo()
                .history()
                .revisions_of_turn(&thread_id, turn)
                .await?;
            let mut panels: BTreeSet<String> =
                made.iter().flat_map(super::reads::panels_of).collect();
            panels.remove(Panel::Artifacts.as_str());
            // Suggestions are records too: undoing a turn leaves them (a person rejects them).
            panels.remove(Panel::Suggestions.as_str());
            let (Some(first), false) = (made.first(), panels.is_empty()) else {
                return Err(WorkspaceError::Conflicts {
                    message: format!(
                        "turn {turn} has no change in this thread's history that can be undone \
                         (artifacts are kept as records, and a fork records the workspace it \
                         starts from as one revision)"
                    ),
                    conflicts: Vec::new(),
                });
            };
            let first = first.rev;
            let latest = edit.repo().history().last_revision(&thread_id).await?;
            let later: Vec<Revision> = edit
                .repo()
                .history()
                .revisions_between(&thread_id, first + 1, latest)
                .await?
                .into_iter()
                .filter(|r| r.turn_index != Some(turn))
                .collect();
            let found = conflicts(&panels, &later);
            if !found.is_empty() {
                let list: Vec<String> = found
                    .iter()
                    .map(|c| format!("the {} in revision {}", c.panel, c.rev))
                    .collect();
                return Err(WorkspaceError::Conflicts {
                    message: format!(
                        "turn {turn} cannot be undone without losing later changes to {}: \
                         restore an earlier revision instead, or edit by hand",
                        list.join(", ")
                    ),
                    conflicts: found,
                });
            }
            let order: Vec<Panel> = RESTORABLE
                .into_iter()
                .filter(|p| panels.contains(p.as_str()))
                .collect();
            let target = edit.read().snapshot_at(first - 1).await?;
            edit.set_panels(&target, &order).await
        }
        .await;
        self.finish_rewrite(thread, edit, outcome, |written| ChangeNote {
            summary: format!(
                "undid turn {turn}: the {} as before it",
                list_panels(written)
            ),
            reverted_turn: Some(turn),
            ..ChangeNote::default()
        })
        .await
    }

    /// Commits a restore or a revert and answers where the workspace stands.
    async fn finish_rewrite<W>(
        &self,
        thread: &haico_store::ThreadId,
        edit: Edit,
        outcome: Result<W, WorkspaceError>,
        note: impl FnOnce(&W) -> ChangeNote,
    ) -> Result<(i64, Workspace), WorkspaceError> {
        let (_, committed) = edit.end(outcome, note).await??;
        let mut view = self.view(thread).await?;
        let rev = match committed.rev {
            Some(rev) => Ok(rev),
            None => view.latest_revision().await,
        };
        let now = match rev {
            Ok(rev) => view.snapshot_at(rev).await.map(|ws| (rev, ws)),
            Err(err) => Err(err),
        };
        view.settle(now).await
    }
}
