//! [`Edit`]: one change of a thread's workspace, from its first write to the commit that
//! announces it.
//!
//! An edit is a write transaction bound to one thread and one [`Source`]. The panel modules
//! add their operations to it (`impl Edit` blocks in `plan.rs`, `preferences.rs`, …), each
//! applying its rules before it writes. [`Edit::end`] is where a change is decided: a success
//! is committed, a failure discarded. [`Edit::commit`] is the one way a change becomes
//! visible: it appends the change's events to the thread's log inside the transaction,
//! commits, and then publishes exactly what was committed. Dropped or discarded, an edit has
//! written nothing.

use std::sync::Arc;

use crate::{events::LiveEvent, events::SharedBus};
use crate::{
    workspace::announce::Source, workspace::announce::StoredArtifact,
    workspace::announce::artifact_event, workspace::announce::workspace_event,
    workspace::error::WorkspaceError, workspace::revision::ChangeNote, workspace::view::View,
    workspace::view::discard,
};
use haico_store::{
    ChangeLog, DocumentMode, NewEvent, StoredEvent, ThreadId, Transaction, panels::PanelSet,
};

/// A change of one thread's workspace, open until [`commit`](Self::commit).
pub struct Edit {
    view: View,
    source: Source,
    locked: bool,
    bus: SharedBus,
    /// Events to append ahead of the change's own (a tool call's record), in order.
    lead: Vec<NewEvent>,
    /// Artifacts stored by this edit, announced at commit.
    artifacts: Vec<StoredArtifact>,
    /// Who makes the change, when known: its revision records them unless its note names
    /// someone.
    by: Option<String>,
    /// The agent's `action_and_reasoning` for the call this edit runs, so a suggestion it
    /// makes keeps the agent's reason with it.
    reason: Option<String>,
    /// The passage the turn is about, when a person selected one: suggestions must stay
    /// inside it.
    focus: Option<std::sync::Arc<crate::workspace::focus::Focus>>,
    /// The thread's document mode as read under the thread's lock when the edit opened (an
    /// agent's call); `None` when it must be asked for.
    document_mode: Option<DocumentMode>,
    /// An agent's call whose lock is taken by its first statement: until then the thread's
    /// row (does it exist, its turn index, its document mode) is not known
    /// ([`confirm`](Self::confirm)).
    unconfirmed: bool,
}

impl std::fmt::Debug for Edit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Edit")
            .field("thread", &self.view.thread)
            .field("source", &self.source)
            .field("locked", &self.locked)
            .finish()
    }
}

/// What a commit did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Committed {
    /// The panels the change touched (empty when it changed nothing).
    pub changed: PanelSet,
    /// The revision the change became, when it changed something.
    pub rev: Option<i64>,
    /// The events it appended and published, in order.
    pub events: Vec<StoredEvent>,
}

impl Committed {
    /// The sequence number of the first event appended, if any.
    pub fn first_seq(&self) -> Option<i64> {
        self.events.first().map(|event| event.seq)
    }
}

impl Edit {
    /// An edit of `thread` on an open write transaction. The caller has checked (or locked)
    /// the thread, or the first write finds out.
    pub(super) fn new(
        repo: Transaction,
        thread: &ThreadId,
        turn_index: i64,
        source: Source,
        locked: bool,
        bus: SharedBus,
    ) -> Self {
        Self {
            view: View {
                repo,
                thread: thread.clone(),
                turn_index,
                created_at: None,
                unchecked: false,
            },
            source,
            locked,
            bus,
            lead: Vec::new(),
            artifacts: Vec::new(),
            by: None,
            reason: None,
            focus: None,
            document_mode: None,
            unconfirmed: false,
        }
    }

    /// An agent call's edit of `thread` whose lock is taken by its first statement
    /// ([`Database::begin_agent_write`](haico_store::Database::begin_agent_write)).
    pub(super) fn unconfirmed(repo: Transaction, thread: &ThreadId, bus: SharedBus) -> Self {
        let mut edit = Self::new(repo, thread, 0, Source::Agent, true, bus);
        edit.unconfirmed = true;
        edit
    }

    /// Makes sure the thread exists and its row is read under the lock: at once when the
    /// edit was opened so, otherwise from what the first statement's round trip read, or with
    /// the lock alone when nothing was sent yet (one round trip). Fails with
    /// [`WorkspaceError::UnknownThread`] for a thread that does not exist.
    pub(super) async fn confirm(&mut self) -> Result<(), WorkspaceError> {
        if !self.unconfirmed {
            return Ok(());
        }
        match self.view.repo.thread_head().await? {
            Some(head) => {
                self.view.turn_index = head.turn_index;
                self.document_mode = Some(head.document_mode);
                self.unconfirmed = false;
                Ok(())
            }
            None => Err(WorkspaceError::UnknownThread(self.view.thread.to_string())),
        }
    }

    /// Sets the agent's sentence on what this call does and why (see [`Edit::reason`]).
    pub fn set_reason(&mut self, reason: Option<String>) {
        self.reason = reason;
    }

    /// The agent's sentence for the call this edit runs, when the tool runtime gave one.
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// The person this change is made by, when known.
    pub fn made_by(&self) -> Option<&str> {
        self.by.as_deref()
    }

    /// The passage this change is about, when the turn is about a person's selection.
    pub fn focus(&self) -> Option<&crate::workspace::focus::Focus> {
        self.focus.as_deref()
    }

    /// The same edit, about `focus`.
    pub(super) fn about(
        self,
        focus: Option<std::sync::Arc<crate::workspace::focus::Focus>>,
    ) -> Self {
        Self { focus, ..self }
    }

    /// The same edit, made by the person named `by`.
    pub(super) fn by(self, by: Option<String>) -> Self {
        Self { by, ..self }
    }

    /// Sets the turn counter this edit records its revision under (a fork starts at the
    /// source's).
    pub(super) fn set_turn_index(&mut self, turn_index: i64) {
        self.view.turn_index = turn_index;
    }

    /// Which path this change came in by.
    pub fn source(&self) -> Source {
        self.source
    }

    /// The panels written so far.
    pub fn changed(&self) -> PanelSet {
        self.view.repo.changed()
    }

    /// The repository, for the panel modules' writes.
    pub(super) fn repo(&mut self) -> &mut Transaction {
        &mut self.view.repo
    }

    /// The thread's id, cloned (one `Arc`), so the store can take it while the repository is
    /// borrowed.
    pub(super) fn thread_id(&self) -> ThreadId {
        self.view.thread.clone()
    }

    /// Holds the thread for the rest of the transaction (a no-op when already held): other
    /// edits that lock it wait until this one ends. Agent calls are opened locked; the user
    /// path's plan edits lock here, because positions must not move under them.
    pub(super) async fn lock(&mut self) -> Result<(), WorkspaceError> {
        if self.locked {
            return Ok(());
        }
        match self
            .view
            .repo
            .threads()
            .lock_thread(&self.view.thread)
            .await?
        {
            Some(turn_index) => {
                self.view.turn_index = turn_index;
                self.locked = true;
                Ok(())
            }
            None => Err(WorkspaceError::UnknownThread(self.view.thread.to_string())),
        }
    }

    /// Remembers the document mode read under the thread's lock, which keeps it from changing
    /// until this edit ends.
    pub(super) fn knows_document_mode(&mut self, mode: DocumentMode) {
        self.document_mode = Some(mode);
    }

    /// The document mode read under the lock, when it was.
    pub(super) fn known_document_mode(&self) -> Option<DocumentMode> {
        self.document_mode
    }

    /// Queues an event to be appended ahead of the change's own at commit.
    pub(super) fn announce(&mut self, event: NewEvent) {
        self.lead.push(event);
    }

    /// Remembers an artifact this edit stored, to announce it at commit.
    pub(super) fn stored_artifact(&mut self, artifact: StoredArtifact) {
        self.artifacts.push(artifact);
    }

    /// Commits the change and announces it: the queued events, an `artifact` event per stored
    /// artifact and a `workspace` event naming the changed panels are appended to the thread's
    /// log in this transaction; after the commit they are published. An edit that changed
    /// nothing and queued nothing commits without announcing anything.
    pub async fn commit(mut self, mut note: ChangeNote) -> Result<Committed, WorkspaceError> {
        if note.by.is_none() {
            note.by = self.by.clone();
        }
        if let Err(err) = self.confirm().await {
            discard(self.view.repo).await;
            return Err(err);
        }
        let changed = self.changed();
        let thread = self.thread_id();
        let logged = self.log(changed, &thread, &note).await;
        let (rev, stored) = match logged {
            Ok(logged) => logged,
            Err(err) => {
                discard(self.view.repo).await;
                return Err(err);
            }
        };
        let Edit {
            view, source, bus, ..
        } = self;
        view.repo.commit().await?;
        if !changed.is_empty() {
            tracing::debug!(
                panels = ?changed.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
                source = source.as_str(),
                tool = note.tool.as_deref().unwrap_or(""),
                summary = %note.summary,
                rev,
                "workspace changed"
            );
        }
        publish(&bus, thread.as_str(), &stored);
        Ok(Committed {
            changed,
            rev,
            events: stored,
        })
    }

    /// Writes the change's revision (when it changed a panel) and its events, in this
    /// transaction: the queued events, an `artifact` event per stored artifact and a
    /// `workspace` event naming the changed panels.
    async fn log(
        &mut self,
        changed: PanelSet,
        thread: &haico_store::ThreadId,
        note: &ChangeNote,
    ) -> Result<(Option<i64>, Vec<StoredEvent>), WorkspaceError> {
        let mut events = std::mem::take(&mut self.lead);
        let record = if changed.is_empty() {
            None
        } else {
            events.extend(self.artifacts.iter().map(artifact_event));
            events.push(workspace_event(changed, self.source));
            Some(crate::workspace::revision::PendingRevision::of(
                self.repo().journal(),
            )?)
        };
        let revision = record.as_ref().map(|record| {
            (
                crate::workspace::revision::revision_of(
                    note,
                    self.source,
                    self.turn_index(),
                    changed,
                ),
                haico_store::revision_time(),
                record.first(),
            )
        });
        let log = ChangeLog {
            revision,
            events: &events,
            // Thread lists sort by the agent's last work, a call that changed nothing
            // included (on PostgreSQL its lock marks the thread); a person's edit does not
            // take the thread row, so it never waits behind an agent call.
            touch: self.source == Source::Agent,
            artifacts: record.as_ref().map_or(
                &[][..],
                crate::workspace::revision::PendingRevision::artifacts,
            ),
        };
        // Most changes write nothing after their log: on PostgreSQL the log and the commit
        // then go in one round trip (where the store can; it says `None` otherwise).
        if record.as_ref().is_none_or(|record| record.only_first())
            && let Some(logged) = self
                .view
                .repo
                .history()
                .log_change_and_commit(thread, log)
                .await?
        {
            if let (Some(record), Some(rev)) = (&record, logged.rev) {
                // Committed: a failure here costs only a longer replay until the next change
                // of the panel tries again.
                if let Err(err) = record
                    .compact(&mut self.view.repo, thread, rev, logged.chain)
                    .await
                {
                    tracing::warn!(error = %err, rev, "recording a panel's whole state failed");
                }
            }
            return Ok((logged.rev, logged.events));
        }
        let logged = self.view.repo.history().log_change(thread, log).await?;
        if let (Some(record), Some(rev)) = (&record, logged.rev) {
            record
                .finish(&mut self.view.repo, thread, rev, logged.chain)
                .await?;
        }
        Ok((logged.rev, logged.events))
    }

    /// Reads made within the change's own transaction, so they see what it has written so far.
    /// An edit reads *through* its view rather than being one: the reads are the view's, the
    /// writes and the commit are the edit's.
    pub fn read(&mut self) -> &mut View {
        &mut self.view
    }

    /// Whether the thread's row is still unread: an agent's call on PostgreSQL before its first
    /// statement, which will take the lock and read it ([`confirm`](Self::confirm)).
    pub(super) fn is_unconfirmed(&self) -> bool {
        self.unconfirmed && self.view.repo.thread_head_pending()
    }

    /// Undoes what the edit wrote and begins again, holding the thread (one round trip): for a
    /// write made ahead of the lock's answer that the answer proved wrong. Only after the edit
    /// was [confirmed](Self::confirm) on PostgreSQL.
    pub(super) async fn start_over(&mut self) -> Result<(), WorkspaceError> {
        let thread = self.thread_id();
        match self.view.repo.start_over(&thread).await? {
            Some(head) => {
                self.view.turn_index = head.turn_index;
                self.document_mode = Some(head.document_mode);
                self.artifacts.clear();
                Ok(())
            }
            None => Err(WorkspaceError::UnknownThread(thread.to_string())),
        }
    }

    /// The agent turn the change belongs to (its revision and steps are filed under it); for
    /// an agent's call, once [confirmed](Self::confirm).
    pub(super) fn turn_index(&self) -> i64 {
        self.view.turn_index()
    }

    /// The agent turn the change belongs to, as the thread's row says under the lock: for an
    /// agent's call on PostgreSQL the first statement's round trip read it, or it is read now
    /// (one round trip). Fails with [`WorkspaceError::UnknownThread`] for a thread that does
    /// not exist, which is what a call reports whatever else went wrong in it.
    pub async fn turn(&mut self) -> Result<i64, WorkspaceError> {
        self.confirm().await?;
        Ok(self.turn_index())
    }

    /// Ends the change, the one place where it is decided: a successful `outcome` is committed
    /// with the note `note` makes of it, and announced; a failed one is discarded, nothing of
    /// it stays. The outer error is the commit's own; the inner one is `outcome`'s, handed
    /// back as it was.
    pub async fn end<T, E>(
        self,
        outcome: Result<T, E>,
        note: impl FnOnce(&T) -> ChangeNote,
    ) -> Result<Result<(T, Committed), E>, WorkspaceError> {
        match outcome {
            Ok(value) => {
                let committed = self.commit(note(&value)).await?;
                Ok(Ok((value, committed)))
            }
            Err(err) => {
                self.discard().await;
                Ok(Err(err))
            }
        }
    }

    /// Abandons the change: nothing it wrote stays.
    pub async fn discard(self) {
        discard(self.view.repo).await;
    }
}

/// Hands committed events to the bus.
fn publish(bus: &SharedBus, thread_id: &str, events: &[StoredEvent]) {
    if !events.is_empty() {
        bus.publish(
            thread_id,
            events
                .iter()
                .cloned()
                .map(|e| Arc::new(LiveEvent::from(e)))
                .collect(),
        );
    }
}
