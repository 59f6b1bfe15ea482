//! The workspace never forgets: every committed change is a numbered revision, and the
//! workspace at any revision can be rebuilt, compared, restored, undone by turn, or forked.
//!
//! Recording happens in [`Edit::commit`](super::Edit::commit), inside the change's own
//! transaction: one revision row (who, which turn and tool, why, which panels, what), and per
//! changed panel what the write methods journaled — the operations that turn the previous
//! revision's state into this one — or, every so often, the panel's whole state. A whole state
//! is stored when the chain since the last one reaches [`MAX_CHAIN`] records or outweighs the
//! last whole state (and at least [`MIN_WHOLE_BYTES`]), so history grows with what changed, not
//! with a panel's size, and a read replays at most [`MAX_CHAIN`] records.

use std::collections::BTreeSet;

use serde::Serialize;

use super::{ChangeNote, Edit, View, WorkspaceError};
use crate::{
    panels::{Panel, PanelSet},
    store::{
        Document, NewRevision, PanelWrite, PlanStep, Preference, Revision, Workspace,
        WorkspaceRepository,
        journal::{DocumentDelta, DocumentJournal, HasId, ListOp, apply_list, apply_text},
    },
};

/// The most records a panel's chain holds before its whole state is stored again.
pub const MAX_CHAIN: i64 = 1_000;
/// A chain smaller than this never forces a whole state by its size.
pub const MIN_WHOLE_BYTES: i64 = 256 * 1024;
/// How long a document diff may search for the smallest difference.
const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(15);
/// How many revisions a history page lists when no limit is given.
pub const HISTORY_DEFAULT: i64 = 50;
/// The largest history page.
pub const HISTORY_MAX: i64 = 500;

/// Whether a chain that has grown to `chain` should end with a whole state.
fn wants_whole(chain: crate::store::Chain) -> bool {
    chain.len >= MAX_CHAIN || chain.bytes >= chain.base.max(MIN_WHOLE_BYTES)
}

/// What a change about to commit records in the history: per changed panel, its whole state
/// or the operations that made it (from the edit's journal).
pub(super) struct Record {
    writes: Vec<(&'static str, bool, String)>,
    artifacts: Vec<i64>,
}

impl Record {
    /// What `edit`'s journal says to record.
    pub(super) fn of(edit: &mut Edit) -> Result<Self, WorkspaceError> {
        let journal = edit.repo().journal().clone();
        let mut writes: Vec<(&'static str, bool, String)> = Vec::new();
        if let Some(objective) = &journal.objective {
            writes.push(("objective", true, to_json(objective)?));
        }
        match &journal.document {
            DocumentJournal::Untouched => {}
            DocumentJournal::Set(state) => writes.push(("document", true, to_json(state)?)),
            DocumentJournal::Edited(delta) => writes.push(("document", false, to_json(delta)?)),
        }
        if !journal.plan.is_empty() {
            writes.push(match set_whole(&journal.plan) {
                Some(items) => ("plan", true, to_json(&items)?),
                None => ("plan", false, to_json(&journal.plan)?),
            });
        }
        if !journal.preferences.is_empty() {
            writes.push(match set_whole(&journal.preferences) {
                Some(items) => ("preferences", true, to_json(&items)?),
                None => ("preferences", false, to_json(&journal.preferences)?),
            });
        }
        Ok(Self {
            writes,
            artifacts: journal.artifacts.clone(),
        })
    }

    /// The first panel's record: it goes to the store with the revision, in one round trip.
    pub(super) fn first(&self) -> Option<PanelWrite<'_>> {
        self.writes.first().map(|(panel, whole, data)| PanelWrite {
            panel,
            whole: *whole,
            data,
        })
    }

    /// Writes the rest, once the revision `rev` is stored with the first panel's record
    /// (whose chain stands at `first_chain`): the other panels' records (rare: most changes
    /// touch one panel), a whole state where a chain has grown long, and the artifacts' stamp.
    pub(super) async fn finish(
        &self,
        repo: &mut WorkspaceRepository,
        thread: &str,
        rev: i64,
        first_chain: Option<crate::store::Chain>,
    ) -> Result<(), WorkspaceError> {
        for (i, (panel, whole, data)) in self.writes.iter().enumerate() {
            let chain = match (i, whole) {
                (0, _) => first_chain,
                (_, true) => {
                    repo.record_panel_state(thread, panel, rev, data).await?;
                    None
                }
                (_, false) => Some(repo.record_panel_ops(thread, panel, rev, data).await?),
            };
            // A chain grown long enough ends with the panel's whole state, so reads stay short.
            if chain.is_some_and(wants_whole) {
                let state = match *panel {
                    "document" => to_json(&repo.get_document(thread).await?)?,
                    "plan" => to_json(&repo.plan_steps(thread).await?)?,
                    _ => to_json(&repo.list_preferences(thread).await?)?,
                };
                repo.record_panel_state(thread, panel, rev, &state).await?;
            }
        }
        if !self.artifacts.is_empty() {
            repo.stamp_artifacts(thread, &self.artifacts, rev).await?;
        }
        Ok(())
    }
}

/// The revision row of a change described by `note`.
pub(super) fn revision_of<'a>(
    note: &'a ChangeNote,
    source: super::Source,
    thread_turn: i64,
    changed: PanelSet,
) -> NewRevision<'a> {
    NewRevision {
        source: source.as_str(),
        by: note.by.as_deref(),
        turn_index: note.turn_index,
        thread_turn,
        tool: note.tool.as_deref(),
        action_and_reasoning: note.action_and_reasoning.as_deref(),
        panels: changed,
        summary: &note.summary,
        restored_from: note.restored_from,
        reverted_turn: note.reverted_turn,
    }
}

/// The list a change's operations leave when one of them set it whole (a restore, a fork):
/// from the last such operation on, no earlier state is needed.
fn set_whole<T: HasId + Clone>(ops: &[ListOp<T>]) -> Option<Vec<T>> {
    let last_set = ops
        .iter()
        .rposition(|op| matches!(op, ListOp::Set { .. }))?;
    let mut items = Vec::new();
    for op in &ops[last_set..] {
        apply_list(&mut items, op);
    }
    Some(items)
}

fn to_json<T: Serialize + ?Sized>(value: &T) -> Result<String, WorkspaceError> {
    serde_json::to_string(value).map_err(|err| WorkspaceError::Store(err.into()))
}

/// Rebuilds the workspace of `thread` as it stood right after revision `rev` (0: empty).
pub(super) async fn workspace_at(
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

async fn objective_at(
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
pub(super) async fn document_at(
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
            let doc = document.get_or_insert_with(super::empty_document);
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
async fn documents_at(
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
            let doc = document.get_or_insert_with(super::empty_document);
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

async fn list_at<T>(
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

fn from_json<T: serde::de::DeserializeOwned>(data: &str) -> Result<T, WorkspaceError> {
    serde_json::from_str(data).map_err(|err| WorkspaceError::Store(err.into()))
}

/// A page of a thread's history, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct HistoryPage {
    /// The revisions.
    pub revisions: Vec<Revision>,
    /// Pass this as `before` for the next (older) page; `null` on the last.
    pub next_before: Option<i64>,
}

/// A line-based unified diff of the document between two revisions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct DocumentDiff {
    /// The older revision.
    pub from: i64,
    /// The newer revision.
    pub to: i64,
    /// `---`/`+++` header, `@@` hunks, and `-`, `+` and ` ` lines; empty when nothing differs.
    pub unified: String,
}

/// One later change that stands in the way of undoing a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct RevertConflict {
    /// The panel both changed.
    pub panel: String,
    /// The later revision that changed it.
    pub rev: i64,
}

/// The panels a restore sets back when it names none.
pub const RESTORABLE: [Panel; 4] = [
    Panel::Objective,
    Panel::Document,
    Panel::Plan,
    Panel::Preferences,
];

impl View {
    /// The thread's latest revision (0 before its first change).
    pub async fn latest_revision(&mut self) -> Result<i64, WorkspaceError> {
        let thread = self.thread.to_string();
        Ok(self.repo.last_revision(&thread).await?)
    }

    /// Checks that `rev` names a revision of this thread (0 is the empty workspace).
    pub async fn check_revision(&mut self, rev: i64) -> Result<i64, WorkspaceError> {
        if rev < 0 {
            return Err(WorkspaceError::invalid(format!(
                "revision {rev} does not exist: revisions count from 0 (the empty workspace)"
            )));
        }
        let latest = self.latest_revision().await?;
        if rev > latest {
            return Err(WorkspaceError::NotFound(format!(
                "revision {rev} does not exist: the thread's latest revision is {latest}"
            )));
        }
        Ok(latest)
    }

    /// The workspace exactly as it stood right after revision `rev`.
    pub async fn snapshot_at(&mut self, rev: i64) -> Result<Workspace, WorkspaceError> {
        self.check_revision(rev).await?;
        let thread = self.thread.to_string();
        workspace_at(&mut self.repo, &thread, rev).await
    }

    /// The document as it stood right after revision `rev`.
    pub async fn document_at(&mut self, rev: i64) -> Result<Option<Document>, WorkspaceError> {
        let thread = self.thread.to_string();
        document_at(&mut self.repo, &thread, rev).await
    }

    /// What the person did to the history (restores, undone turns) since the agent's previous
    /// turn began: the summaries the next prompt mentions.
    pub async fn rewrites_since_last_turn(&mut self) -> Result<Vec<String>, WorkspaceError> {
        let thread = self.thread.to_string();
        let since = (self.turn_index - 1).max(0);
        Ok(self
            .repo
            .rewrites_since(&thread, since)
            .await?
            .into_iter()
            .map(|r| r.summary)
            .collect())
    }

    /// The document at two revisions (`from <= to`), replayed together.
    pub async fn documents_at(
        &mut self,
        from: i64,
        to: i64,
    ) -> Result<(Option<Document>, Option<Document>), WorkspaceError> {
        let thread = self.thread.to_string();
        documents_at(&mut self.repo, &thread, from, to).await
    }

    /// A page of the history, newest first: revisions older than `before` (all when `None`),
    /// at most `limit` ([`HISTORY_DEFAULT`] when not given, at most [`HISTORY_MAX`]).
    pub async fn history(
        &mut self,
        before: Option<i64>,
        limit: Option<i64>,
    ) -> Result<HistoryPage, WorkspaceError> {
        let limit = match limit {
            None => HISTORY_DEFAULT,
            Some(n) if (1..=HISTORY_MAX).contains(&n) => n,
            Some(n) => {
                return Err(WorkspaceError::invalid(format!(
                    "`limit` is {n}: give a number from 1 to {HISTORY_MAX}, or leave it out for \
                     {HISTORY_DEFAULT}"
                )));
            }
        };
        if let Some(before) = before
            && before < 1
        {
            return Err(WorkspaceError::invalid(format!(
                "`before` is {before}: give a revision number from 1 on"
            )));
        }
        let thread = self.thread.to_string();
        let revisions = self.repo.revisions(&thread, before, limit).await?;
        let next_before = match revisions.last() {
            Some(last)
                if revisions.len() == usize::try_from(limit).unwrap_or(0) && last.rev > 1 =>
            {
                Some(last.rev)
            }
            _ => None,
        };
        Ok(HistoryPage {
            revisions,
            next_before,
        })
    }
}

/// The set of panel names in a revision.
fn panels_of(revision: &Revision) -> BTreeSet<String> {
    revision.panels.iter().cloned().collect()
}

/// Which of `panels` later revisions changed again: what stands in the way of undoing a turn.
pub(super) fn conflicts(panels: &BTreeSet<String>, later: &[Revision]) -> Vec<RevertConflict> {
    let mut found = Vec::new();
    for revision in later {
        for panel in panels_of(revision).intersection(panels) {
            found.push(RevertConflict {
                panel: panel.clone(),
                rev: revision.rev,
            });
        }
    }
    found
}

/// A unified diff of two texts, labelled with their revisions.
pub(super) fn unified_diff(old: &str, new: &str, from: i64, to: i64) -> String {
    if old == new {
        return String::new();
    }
    // A bound on the search keeps a diff of two far-apart revisions of a large document fast;
    // past it the diff is still correct, only less minimal.
    similar::TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("revision {from}"), &format!("revision {to}"))
        .to_string()
}

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
        let thread = self.thread_str();
        let current = self.snapshot().await?;
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
                Panel::Artifacts => false,
            };
            if !differs {
                continue;
            }
            let repo = self.repo();
            match panel {
                Panel::Objective => match &target.objective {
                    Some(objective) => repo.set_objective(&thread, objective).await?,
                    None => repo.clear_objective(&thread).await?,
                },
                Panel::Document => {
                    let document = target
                        .document
                        .as_ref()
                        .map(|d| (d.title.as_str(), d.content.as_str()));
                    repo.set_document(&thread, document).await?;
                }
                Panel::Plan => repo.replace_plan(&thread, &target.plan).await?,
                Panel::Preferences => {
                    repo.replace_preferences(&thread, &target.preferences)
                        .await?;
                }
                Panel::Artifacts => {}
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
            Some(Panel::Artifacts) => {
                return Err(WorkspaceError::invalid(
                    "artifacts are records of what was made and are never restored: restore \
                     objective, document, plan or preferences",
                ));
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
fn list_panels(panels: &[Panel]) -> String {
    let names: Vec<&str> = panels.iter().map(|p| p.as_str()).collect();
    match names.as_slice() {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

impl super::Workspaces {
    /// A page of the thread's history, newest first.
    pub async fn history(
        &self,
        thread: &crate::ThreadId,
        before: Option<i64>,
        limit: Option<i64>,
    ) -> Result<HistoryPage, WorkspaceError> {
        let mut view = self.view(thread).await?;
        let page = view.history(before, limit).await;
        view.settle(page).await
    }

    /// The workspace exactly as it stood right after revision `rev`.
    pub async fn workspace_at(
        &self,
        thread: &crate::ThreadId,
        rev: i64,
    ) -> Result<Workspace, WorkspaceError> {
        let mut view = self.view(thread).await?;
        let snapshot = view.snapshot_at(rev).await;
        view.settle(snapshot).await
    }

    /// The document's changes from revision `from` to `to` (the latest when `None`).
    pub async fn document_diff(
        &self,
        thread: &crate::ThreadId,
        from: i64,
        to: Option<i64>,
    ) -> Result<DocumentDiff, WorkspaceError> {
        let mut view = self.view(thread).await?;
        let diff = async {
            let latest = view.check_revision(from).await?;
            let to = to.unwrap_or(latest);
            view.check_revision(to).await?;
            let (old, new) = view.documents_at(from.min(to), from.max(to)).await?;
            let (old, new) = if from <= to { (old, new) } else { (new, old) };
            let (old, new) = (old.map(|d| d.content), new.map(|d| d.content));
            let unified = unified_diff(
                old.as_deref().unwrap_or(""),
                new.as_deref().unwrap_or(""),
                from,
                to,
            );
            Ok(DocumentDiff { from, to, unified })
        }
        .await;
        view.settle(diff).await
    }

    /// A person sets panels (all four unless named) back to their state at `rev`, as one new
    /// revision; artifacts are never removed. Returns the revision the workspace is at now and
    /// the workspace.
    pub async fn restore(
        &self,
        thread: &crate::ThreadId,
        rev: i64,
        panels: Option<&[String]>,
    ) -> Result<(i64, Workspace), WorkspaceError> {
        let panels = restorable_panels(panels)?;
        let mut edit = self.edit(thread, super::Source::User).await?;
        let outcome = async {
            edit.lock().await?;
            let target = edit.snapshot_at(rev).await?;
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
        thread: &crate::ThreadId,
        turn: i64,
    ) -> Result<(i64, Workspace), WorkspaceError> {
        let mut edit = self.edit(thread, super::Source::User).await?;
        let outcome = async {
            edit.lock().await?;
            let turns = edit.turn_index();
            if turn < 1 || turn > turns {
                return Err(WorkspaceError::NotFound(format!(
                    "turn {turn} does not exist: the thread has had {turns} turns"
                )));
            }
            let thread_id = edit.thread_str();
            let made = edit.repo().revisions_of_turn(&thread_id, turn).await?;
            let mut panels: BTreeSet<String> =
                made.iter().flat_map(|r| r.panels.iter().cloned()).collect();
            panels.remove(Panel::Artifacts.as_str());
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
            let latest = edit.repo().last_revision(&thread_id).await?;
            let later: Vec<Revision> = edit
                .repo()
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
            let target = edit.snapshot_at(first - 1).await?;
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
        thread: &crate::ThreadId,
        edit: Edit,
        outcome: Result<W, WorkspaceError>,
        note: impl FnOnce(&W) -> ChangeNote,
    ) -> Result<(i64, Workspace), WorkspaceError> {
        let written = match outcome {
            Ok(written) => written,
            Err(err) => {
                edit.discard().await;
                return Err(err);
            }
        };
        let committed = edit.commit(note(&written)).await?;
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

impl super::Workspaces {
    /// Forks `source` at revision `at` (the latest when `None`): a new thread (`id`, or a fresh
    /// one) whose workspace equals the source's at `at` and whose conversation is the source's
    /// up to that point; it records where it came from. The two evolve independently.
    pub async fn fork(
        &self,
        source: &crate::ThreadId,
        at: Option<i64>,
        id: Option<crate::ThreadId>,
        title: Option<&str>,
    ) -> Result<crate::store::Thread, WorkspaceError> {
        if let Some(title) = title {
            super::threads::checked_title(title)?;
        }
        let id = id.unwrap_or_else(crate::ThreadId::generate);
        let mut edit = self.edit_unchecked(&id, super::Source::User).await?;
        let owner = self.actor().map(|actor| actor.id);
        let outcome = fork_into(&mut edit, source, at, &id, title, owner).await;
        let at = match outcome {
            Ok(at) => at,
            Err(err) => {
                edit.discard().await;
                return Err(err);
            }
        };
        let note = ChangeNote {
            summary: format!("forked from thread `{source}` at revision {at}"),
            ..ChangeNote::default()
        };
        edit.commit(note).await?;
        self.thread(&id).await
    }
}

/// Builds the fork inside `edit` (a write of the new thread); returns the revision forked.
async fn fork_into(
    edit: &mut Edit,
    source: &crate::ThreadId,
    at: Option<i64>,
    id: &crate::ThreadId,
    title: Option<&str>,
    owner: Option<i64>,
) -> Result<i64, WorkspaceError> {
    let repo = edit.repo();
    let origin = repo
        .get_thread(source.as_str())
        .await?
        .ok_or_else(|| WorkspaceError::UnknownThread(source.to_string()))?;
    let latest = repo.last_revision(source.as_str()).await?;
    let at = at.unwrap_or(latest);
    if at < 0 || at > latest {
        return Err(WorkspaceError::NotFound(format!(
            "revision {at} does not exist: the thread's latest revision is {latest}"
        )));
    }
    // The conversation "up to revision `at`" is everything recorded before the next revision
    // was committed, or everything when `at` is the latest (a turn's answer comes after its
    // last change).
    let (up_to_turn, until) = if at < latest {
        let up_to_turn = match at {
            0 => 0,
            _ => repo
                .revisions_between(source.as_str(), at, at)
                .await?
                .pop()
                .map_or(0, |r| r.thread_turn),
        };
        let next = repo
            .revisions_between(source.as_str(), at + 1, at + 1)
            .await?
            .pop()
            .map_or_else(crate::store::revision_time, |next| next.at);
        (up_to_turn, next)
    } else {
        (origin.turn_index, crate::store::revision_time())
    };
    let snapshot = workspace_at(repo, source.as_str(), at).await?;
    let title = match title {
        Some(title) => title.trim().to_string(),
        None => {
            let base: String = origin.title.chars().take(190).collect();
            format!("{base} (fork)")
        }
    };
    match repo
        .create_fork(id.as_str(), &title, 0, (source.as_str(), at))
        .await
    {
        Ok(_) => {}
        Err(err) if err.is_unique_violation() => {
            return Err(WorkspaceError::ThreadExists(id.to_string()));
        }
        Err(err) => return Err(err.into()),
    };
    let new = id.as_str();
    if owner.is_some() {
        repo.set_owner(new, owner).await?;
    }
    if let Some(objective) = &snapshot.objective {
        repo.set_objective(new, objective).await?;
    }
    if let Some(document) = &snapshot.document {
        repo.copy_document(new, document).await?;
    }
    repo.copy_plan(new, &snapshot.plan).await?;
    repo.copy_preferences(new, &snapshot.preferences).await?;
    for summary in snapshot.artifacts.iter().rev() {
        if let Some(artifact) = repo.get_artifact(source.as_str(), summary.id).await? {
            repo.copy_artifact(new, &artifact).await?;
        }
    }
    let turns = repo
        .copy_conversation(source.as_str(), new, up_to_turn, until)
        .await?;
    edit.set_turn_index(turns);
    Ok(at)
}
