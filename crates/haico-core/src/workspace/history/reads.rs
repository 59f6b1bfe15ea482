//! Reading history: pages of revisions, the workspace at a revision, document diffs.

use std::collections::BTreeSet;

use serde::Serialize;

use super::*;
use crate::wire;
use crate::{
    workspace::error::RevertConflict, workspace::error::WorkspaceError, workspace::view::View,
};
use haico_store::{Document, Revision, Workspace};

/// A page of a thread's history, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct HistoryPage {
    /// The revisions.
    pub revisions: Vec<wire::Revision>,
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

impl View {
    /// The thread's latest revision (0 before its first change).
    pub async fn latest_revision(&mut self) -> Result<i64, WorkspaceError> {
        let thread = self.thread.clone();
        Ok(self.repo.history().last_revision(&thread).await?)
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
        let thread = self.thread.clone();
        workspace_at(&mut self.repo, &thread, rev).await
    }

    /// The document as it stood right after revision `rev`.
    pub async fn document_at(&mut self, rev: i64) -> Result<Option<Document>, WorkspaceError> {
        let thread = self.thread.clone();
        document_at(&mut self.repo, &thread, rev).await
    }

    /// What the person did to the history (restores, undone turns) since the agent's previous
    /// turn began: the summaries the next prompt mentions.
    pub async fn rewrites_since_last_turn(&mut self) -> Result<Vec<String>, WorkspaceError> {
        let thread = self.thread.clone();
        let since = (self.turn_index - 1).max(0);
        Ok(self
            .repo
            .history()
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
        let thread = self.thread.clone();
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
        let thread = self.thread.clone();
        let revisions = self
            .repo
            .history()
            .revisions(&thread, before, limit)
            .await?;
        let next_before = match revisions.last() {
            Some(last)
                if revisions.len() == usize::try_from(limit).unwrap_or(0) && last.rev > 1 =>
            {
                Some(last.rev)
            }
            _ => None,
        };
        Ok(HistoryPage {
            revisions: revisions.into_iter().map(wire::Revision::from).collect(),
            next_before,
        })
    }
}

/// The set of panel names in a revision.
pub(super) fn panels_of(revision: &Revision) -> BTreeSet<String> {
    revision
        .panels
        .iter()
        .map(|panel| panel.as_str().to_string())
        .collect()
}

/// Which of `panels` later revisions changed again: what stands in the way of undoing a turn.
pub(crate) fn conflicts(panels: &BTreeSet<String>, later: &[Revision]) -> Vec<RevertConflict> {
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
pub(crate) fn unified_diff(old: &str, new: &str, from: i64, to: i64) -> String {
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

impl crate::workspace::service::Workspaces {
    /// A page of the thread's history, newest first.
    pub async fn history(
        &self,
        thread: &haico_store::ThreadId,
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
        thread: &haico_store::ThreadId,
        rev: i64,
    ) -> Result<Workspace, WorkspaceError> {
        let mut view = self.view(thread).await?;
        let snapshot = view.snapshot_at(rev).await;
        view.settle(snapshot).await
    }

    /// The document's changes from revision `from` to `to` (the latest when `None`).
    pub async fn document_diff(
        &self,
        thread: &haico_store::ThreadId,
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
}
