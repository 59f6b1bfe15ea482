//! [`View`]: one consistent read of a thread's workspace.
//!
//! A view is a read transaction (a snapshot: SQLite's reader connections, PostgreSQL's
//! `REPEATABLE READ READ ONLY`) on a thread known to exist. Read-only tools, the prompt and
//! the user path's reads all go through one; an [`Edit`](super::Edit) derefs to a view of its
//! own transaction, so a write reads what it is about to change.

use crate::{workspace::artifact_query::ArtifactQuery, workspace::error::WorkspaceError};
use haico_store::{
    Artifact, ArtifactSummary, Document, DocumentExcerpt, PlanPage, PlanStep, Preference,
    StoreError, StoredTurn, Thread, ThreadId, Transaction, Workspace, panels::PanelSet,
};

/// A read of one thread's workspace inside one transaction.
pub struct View {
    pub(super) repo: Transaction,
    pub(super) thread: ThreadId,
    pub(super) turn_index: i64,
    /// When the thread was made, when the view read its row on opening (an edit's view does
    /// not), so the prompt's cache check costs no statement.
    pub(super) created_at: Option<chrono::DateTime<chrono::Utc>>,
    /// Opened without checking that the thread exists ([`View::unchecked`]): the first panel
    /// read checks it in the same statement, or [`View::check`] does.
    pub(super) unchecked: bool,
}

impl std::fmt::Debug for View {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("View")
            .field("thread", &self.thread)
            .field("turn_index", &self.turn_index)
            .finish()
    }
}

impl View {
    /// Opens a view on `repo` after checking that the thread exists.
    pub(super) async fn open(
        mut repo: Transaction,
        thread: &ThreadId,
    ) -> Result<(Self, Thread), WorkspaceError> {
        match repo.threads().get_thread(thread).await {
            Ok(Some(row)) => Ok((
                Self {
                    repo,
                    thread: thread.clone(),
                    turn_index: row.turn_index,
                    created_at: Some(row.created_at),
                    unchecked: false,
                },
                row,
            )),
            Ok(None) => {
                discard(repo).await;
                Err(WorkspaceError::UnknownThread(thread.to_string()))
            }
            Err(err) => {
                discard(repo).await;
                Err(err.into())
            }
        }
    }

    /// A view on `repo` that has not checked the thread yet: a read-only tool's, whose one
    /// panel read checks the thread in the same statement (one round trip where the check and
    /// the read were two). Until then its turn index is 0 and reads of a missing thread find
    /// nothing; the caller ends with [`check`](Self::check), which fails for a missing thread
    /// whatever the reads found.
    pub(super) fn unchecked(repo: Transaction, thread: &ThreadId) -> Self {
        Self {
            repo,
            thread: thread.clone(),
            turn_index: 0,
            created_at: None,
            unchecked: true,
        }
    }

    /// Makes sure the thread exists (a no-op when the view already knows it does), so an
    /// unchecked view's reads can be trusted: a missing thread is
    /// [`WorkspaceError::UnknownThread`].
    pub async fn check(&mut self) -> Result<(), WorkspaceError> {
        if !self.unchecked {
            return Ok(());
        }
        match self.repo.threads().get_thread(&self.thread).await? {
            Some(row) => {
                self.found(row.turn_index);
                self.created_at = Some(row.created_at);
                Ok(())
            }
            None => Err(WorkspaceError::UnknownThread(self.thread.to_string())),
        }
    }

    /// Takes what a read that also checked the thread found: the thread's turn index, or
    /// `None` when the thread does not exist.
    fn checked<T>(&mut self, read: Option<(i64, T)>) -> Result<T, WorkspaceError> {
        match read {
            Some((turn_index, value)) => {
                self.found(turn_index);
                Ok(value)
            }
            None => Err(WorkspaceError::UnknownThread(self.thread.to_string())),
        }
    }

    fn found(&mut self, turn_index: i64) {
        self.turn_index = turn_index;
        self.unchecked = false;
    }

    /// The thread this view reads.
    pub fn thread_id(&self) -> &ThreadId {
        &self.thread
    }

    /// The thread's turn index as of this view (0 before the first turn): what artifacts made
    /// now are tagged with.
    pub fn turn_index(&self) -> i64 {
        self.turn_index
    }

    /// The objective, if one is set.
    pub async fn objective(&mut self) -> Result<Option<String>, WorkspaceError> {
        Ok(self.repo.objectives().get_objective(&self.thread).await?)
    }

    /// The document, if one exists.
    pub async fn document(&mut self) -> Result<Option<Document>, WorkspaceError> {
        Ok(self.repo.documents().get_document(&self.thread).await?)
    }

    /// The plan, in order.
    pub async fn plan(&mut self) -> Result<Vec<PlanStep>, WorkspaceError> {
        if self.unchecked {
            let read = self.repo.plan().plan_on_thread(&self.thread).await?;
            return self.checked(read);
        }
        Ok(self.repo.plan().plan_steps(&self.thread).await?)
    }

    /// How many steps the plan has.
    pub async fn plan_len(&mut self) -> Result<usize, WorkspaceError> {
        Ok(super::rules::count(
            self.repo.plan().plan_len(&self.thread).await?,
        ))
    }

    /// The preferences, in the order 1-based indices refer to.
    pub async fn preferences(&mut self) -> Result<Vec<Preference>, WorkspaceError> {
        if self.unchecked {
            let read = self
                .repo
                .preferences()
                .preferences_on_thread(&self.thread)
                .await?;
            return self.checked(read);
        }
        Ok(self
            .repo
            .preferences()
            .list_preferences(&self.thread)
            .await?)
    }

    /// Artifacts, newest first, as the query asks.
    pub async fn artifacts(
        &mut self,
        query: &ArtifactQuery,
    ) -> Result<Vec<ArtifactSummary>, WorkspaceError> {
        if self.unchecked {
            let read = self
                .repo
                .artifacts()
                .artifacts_on_thread(&self.thread, query.artifact_type.as_deref(), query.limit)
                .await?;
            return self.checked(read);
        }
        Ok(self
            .repo
            .artifacts()
            .list_artifacts(&self.thread, query.artifact_type.as_deref(), query.limit)
            .await?)
    }

    /// One artifact of this thread; another thread's id is "not found", like a missing one.
    pub async fn artifact(&mut self, artifact_id: i64) -> Result<Artifact, WorkspaceError> {
        let found = if self.unchecked {
            let read = self
                .repo
                .artifacts()
                .artifact_on_thread(&self.thread, artifact_id)
                .await?;
            self.checked(read)?
        } else {
            self.repo
                .artifacts()
                .get_artifact(&self.thread, artifact_id)
                .await?
        };
        found.ok_or_else(|| {
            WorkspaceError::NotFound(format!("artifact {artifact_id} not found in this thread"))
        })
    }

    /// Everything the panels show, in display order.
    pub async fn snapshot(&mut self) -> Result<Workspace, WorkspaceError> {
        Ok(self.repo.threads().workspace(&self.thread).await?)
    }

    /// The conversation: every turn with its messages and tool calls.
    pub async fn conversation(&mut self) -> Result<Vec<StoredTurn>, WorkspaceError> {
        Ok(self.repo.turns().conversation(&self.thread).await?)
    }

    /// The document cut to its first `head` and last `tail` characters (whole when it fits).
    pub async fn document_excerpt(
        &mut self,
        head: i64,
        tail: i64,
    ) -> Result<Option<DocumentExcerpt>, WorkspaceError> {
        Ok(self
            .repo
            .prompt_view()
            .document_excerpt(&self.thread, head, tail)
            .await?)
    }

    /// The first `limit` steps of the plan with its totals.
    pub async fn plan_page(&mut self, limit: i64) -> Result<PlanPage, WorkspaceError> {
        Ok(self
            .repo
            .prompt_view()
            .plan_page(&self.thread, limit)
            .await?)
    }

    /// How many artifacts the thread has.
    pub async fn artifact_count(&mut self) -> Result<i64, WorkspaceError> {
        Ok(self
            .repo
            .prompt_view()
            .count_artifacts(&self.thread)
            .await?)
    }

    /// When the thread was made, as of this view.
    pub async fn thread_created_at(
        &mut self,
    ) -> Result<chrono::DateTime<chrono::Utc>, WorkspaceError> {
        if let Some(created_at) = self.created_at {
            return Ok(created_at);
        }
        match self.repo.threads().get_thread(&self.thread).await? {
            Some(thread) => Ok(thread.created_at),
            None => Err(WorkspaceError::UnknownThread(self.thread.to_string())),
        }
    }

    /// The number of the thread's latest event as of this view (0 before the first).
    pub async fn last_event_seq(&mut self) -> Result<i64, WorkspaceError> {
        Ok(self.repo.events().last_event_seq(&self.thread).await?)
    }

    /// What changed since event `after`, up to this view: the panels every `workspace` event
    /// since names, and whether a person made any of those changes. Every committed change
    /// appends such an event in its own transaction, so nothing is missed; data this version
    /// did not write counts as every panel changed.
    pub async fn changes_since(&mut self, after: i64) -> Result<(PanelSet, bool), WorkspaceError> {
        let mut panels = PanelSet::default();
        let mut by_person = false;
        for data in self
            .repo
            .events()
            .workspace_events_after(&self.thread, after)
            .await?
        {
            match super::announce::read_workspace_event(&data) {
                Some((changed, source)) => {
                    changed.iter().for_each(|panel| panels.insert(panel));
                    by_person |= source == crate::workspace::announce::Source::User;
                }
                None => {
                    panels = haico_store::panels::Panel::ALL.into_iter().collect();
                    by_person = true;
                }
            }
        }
        Ok((panels, by_person))
    }

    /// Ends the read and hands back what it found.
    pub(super) async fn settle<T>(
        self,
        outcome: Result<T, WorkspaceError>,
    ) -> Result<T, WorkspaceError> {
        self.close().await;
        outcome
    }

    /// Ends the read. Dropping a view ends it too; this only does it now rather than when the
    /// connection is next used.
    pub async fn close(self) {
        discard(self.repo).await;
    }
}

/// Rolls a transaction back; a failed rollback is only logged, since the connection discards
/// the transaction anyway when it goes back to the pool.
pub(super) async fn discard(repo: Transaction) {
    if let Err(err) = repo.rollback().await {
        log_rollback(&err);
    }
}

fn log_rollback(err: &StoreError) {
    tracing::warn!(error = %err, "rollback failed");
}
