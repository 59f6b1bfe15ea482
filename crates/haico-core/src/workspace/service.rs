//! [`Workspaces`]: the entry point of the domain layer for every adapter.

use std::sync::Arc;

use crate::{events::InProcessBus, events::SharedBus};
use crate::{
    workspace::actor::Actor, workspace::announce::Source, workspace::edit::Edit,
    workspace::error::WorkspaceError, workspace::revision::ChangeNote, workspace::view::View,
    workspace::view::discard,
};
use haico_store::{Database, ThreadId, Workspace};

/// Opens edits and views of threads on one database, and publishes what edits commit on one
/// bus. Cheap to clone. Changes are made by its [`Actor`], when it has one
/// ([`acting_as`](Self::acting_as)).
#[derive(Debug, Clone)]
pub struct Workspaces {
    pub(super) db: Database,
    pub(super) bus: SharedBus,
    pub(super) actor: Option<Arc<Actor>>,
    /// The passage the changes are about (an agent turn on a person's selection): in suggest
    /// mode the document tools may only change it.
    pub(super) focus: Option<Arc<crate::workspace::focus::Focus>>,
}

impl Workspaces {
    /// The workspaces of `db`, announcing changes on `bus` (shared with the subscribers).
    pub fn new(db: Database, bus: SharedBus) -> Self {
        Self {
            db,
            bus,
            actor: None,
            focus: None,
        }
    }

    /// The same workspaces, changed by `actor` (or by nobody in particular): its name goes
    /// into every revision and message they record, and threads they create belong to it.
    pub fn acting_as(&self, actor: Option<Actor>) -> Self {
        Self {
            db: self.db.clone(),
            bus: self.bus.clone(),
            actor: actor.map(Arc::new),
            focus: self.focus.clone(),
        }
    }

    /// The same workspaces, their changes about `focus` (a turn on a person's selection), or
    /// about nothing in particular.
    pub fn about(&self, focus: Option<crate::workspace::focus::Focus>) -> Self {
        Self {
            focus: focus.map(Arc::new),
            ..self.clone()
        }
    }

    /// The passage the changes are about, if any.
    pub fn focus(&self) -> Option<&crate::workspace::focus::Focus> {
        self.focus.as_deref()
    }

    /// Who changes are made by, if anyone in particular.
    pub fn actor(&self) -> Option<&Actor> {
        self.actor.as_deref()
    }

    /// The actor's name, for `by`.
    pub(super) fn by(&self) -> Option<String> {
        self.actor.as_ref().map(|actor| actor.name.clone())
    }

    /// The workspaces of `db` with a bus of their own (enough when nobody else subscribes).
    pub fn standalone(db: Database) -> Self {
        Self::new(db, Arc::new(InProcessBus::new()))
    }

    /// The database.
    pub fn database(&self) -> &Database {
        &self.db
    }

    /// The bus changes are published on.
    pub fn bus(&self) -> &SharedBus {
        &self.bus
    }

    /// Opens a change of `thread` by `source`. An agent change holds the thread from the start
    /// (calls on one thread run one after another, and every index a call resolves refers to
    /// the plan as it stood when it began); a person's change only checks that the thread
    /// exists, and the operations that need the lock take it.
    pub async fn edit(&self, thread: &ThreadId, source: Source) -> Result<Edit, WorkspaceError> {
        // The transaction begins and the thread is read (and, for the agent, locked) in one
        // round trip.
        let (repo, found) = self
            .db
            .begin_write_on(thread, source == Source::Agent)
            .await?;
        match found {
            Some(head) => {
                let locked = source == Source::Agent;
                let mut edit = Edit::new(
                    repo,
                    thread,
                    head.turn_index,
                    source,
                    locked,
                    self.bus.clone(),
                );
                if locked {
                    // The lock keeps the mode as read until the call ends.
                    edit.knows_document_mode(head.document_mode);
                }
                Ok(edit.by(self.by()).about(self.focus.clone()))
            }
            None => {
                discard(repo).await;
                Err(WorkspaceError::UnknownThread(thread.to_string()))
            }
        }
    }

    /// An agent's tool call on `thread`: an edit holding the thread, whose lock (and the check
    /// that the thread exists) travels with its first statement, one round trip fewer than
    /// [`edit`](Self::edit) on PostgreSQL. A call that fails must ask [`Edit::turn`] before
    /// reporting its failure: a missing thread may be what made it fail.
    pub async fn edit_for_call(&self, thread: &ThreadId) -> Result<Edit, WorkspaceError> {
        let repo = self.db.begin_agent_write(thread).await?;
        let mut edit = Edit::unconfirmed(repo, thread, self.bus.clone());
        if !edit.is_unconfirmed() {
            // Read already (SQLite reads the thread as it begins): a missing thread ends the
            // call here, as on `edit`'s path.
            if let Err(err) = edit.confirm().await {
                edit.discard().await;
                return Err(err);
            }
        }
        Ok(edit.by(self.by()).about(self.focus.clone()))
    }

    /// A write transaction on `thread` without any check: for records (a turn's opening, a
    /// failed call) whose own write finds out whether the thread exists.
    pub(super) async fn edit_unchecked(
        &self,
        thread: &ThreadId,
        source: Source,
    ) -> Result<Edit, WorkspaceError> {
        let repo = self.db.begin_write().await?;
        Ok(Edit::new(repo, thread, 0, source, false, self.bus.clone()).by(self.by()))
    }

    /// A consistent read of `thread`.
    pub async fn view(&self, thread: &ThreadId) -> Result<View, WorkspaceError> {
        let repo = self.db.begin_read().await?;
        Ok(View::open(repo, thread).await?.0)
    }

    /// A read of `thread` where every statement is its own snapshot (no transaction around
    /// them): for reads answered by one statement, such as a read-only tool listing one panel.
    /// Cheaper than [`view`](Self::view) by the transaction's two round trips, and by the
    /// thread check's: the view is [unchecked](View::unchecked), its panel read checks the
    /// thread too, and the caller ends with [`View::check`].
    pub async fn glance(&self, thread: &ThreadId) -> Result<View, WorkspaceError> {
        let repo = self.db.autocommit_read().await?;
        Ok(View::unchecked(repo, thread))
    }

    /// Everything the thread's panels show, in display order.
    pub async fn snapshot(&self, thread: &ThreadId) -> Result<Workspace, WorkspaceError> {
        let mut view = self.view(thread).await?;
        let snapshot = view.snapshot().await;
        view.settle(snapshot).await
    }

    /// Ends a person's one-shot change: commits it, described by `describe`, when `outcome`
    /// is a success, and discards it (nothing written) when it is an error.
    pub(super) async fn settle<T>(
        &self,
        edit: Edit,
        outcome: Result<T, WorkspaceError>,
        describe: impl FnOnce(&T) -> String,
    ) -> Result<T, WorkspaceError> {
        let (value, _) = edit
            .end(outcome, |value| ChangeNote::user(describe(value)))
            .await??;
        Ok(value)
    }
}
