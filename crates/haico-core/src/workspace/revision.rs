//! What a committed change records: per changed panel its whole state or the operations
//! that made it, and the revision row.

use serde::Serialize;

use crate::workspace::error::WorkspaceError;
use haico_store::{
    NewRevision, PanelWrite, Transaction, journal::DocumentJournal, journal::HasId,
    journal::ListOp, journal::apply_list, panels::PanelSet,
};

/// Whether a chain that has grown to `chain` should end with a whole state.
/// The most records a panel's chain holds before its whole state is stored again.
pub const MAX_CHAIN: i64 = 1_000;
/// A chain smaller than this never forces a whole state by its size.
pub const MIN_WHOLE_BYTES: i64 = 256 * 1024;

pub(super) fn wants_whole(chain: haico_store::Chain) -> bool {
    chain.len >= MAX_CHAIN || chain.bytes >= chain.base.max(MIN_WHOLE_BYTES)
}

/// What a change about to commit records in the history: per changed panel, its whole state
/// or the operations that made it (from the edit's journal).
pub(crate) struct PendingRevision {
    writes: Vec<(&'static str, bool, String)>,
    artifacts: Vec<i64>,
}

impl PendingRevision {
    /// What an edit's journal says to record.
    pub(crate) fn of(journal: &haico_store::journal::Journal) -> Result<Self, WorkspaceError> {
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
        if let Some(mode) = &journal.document_mode {
            writes.push(("document_mode", true, to_json(mode)?));
        }
        if !journal.suggestions.is_empty() {
            writes.push(match set_whole(&journal.suggestions) {
                Some(items) => ("suggestions", true, to_json(&items)?),
                None => ("suggestions", false, to_json(&journal.suggestions)?),
            });
        }
        Ok(Self {
            writes,
            artifacts: journal.artifacts.clone(),
        })
    }

    /// The first panel's record: it goes to the store with the revision, in one round trip.
    pub(crate) fn first(&self) -> Option<PanelWrite<'_>> {
        self.writes.first().map(|(panel, whole, data)| PanelWrite {
            panel,
            whole: *whole,
            data,
        })
    }

    /// Whether [`finish`](Self::finish) has nothing to write but, maybe, a whole state for the
    /// first panel: at most one panel changed, as in most changes (a chart changes none; its
    /// artifact is tagged by the change log itself). Such a change can be logged and committed
    /// in one round trip, and that whole state, when its chain turns out long, written after
    /// the commit ([`compact`](Self::compact)).
    pub(crate) fn only_first(&self) -> bool {
        self.writes.len() <= 1
    }

    /// The artifacts the change stored, which its log tags with the revision.
    pub(crate) fn artifacts(&self) -> &[i64] {
        &self.artifacts
    }

    /// After a change was committed with only its first panel's record (see
    /// [`only_first`](Self::only_first)): when that record's chain has grown long, turns the
    /// record of `rev` into the panel's whole state, as [`finish`](Self::finish) would have
    /// inside the transaction. `repo` is past its commit, so the state is read and written in
    /// statements of their own; the write happens only while `rev` is still the panel's latest
    /// record, so a change committed meanwhile cannot have its effect folded into an older
    /// revision (that change's own chain then asks again).
    pub(crate) async fn compact(
        &self,
        repo: &mut Transaction,
        thread: &haico_store::ThreadId,
        rev: i64,
        chain: Option<haico_store::Chain>,
    ) -> Result<(), WorkspaceError> {
        let Some((panel, _, _)) = self.writes.first() else {
            return Ok(());
        };
        if !chain.is_some_and(wants_whole) {
            return Ok(());
        }
        let state = whole_state(repo, thread, panel).await?;
        repo.history()
            .record_panel_state_if_latest(thread, panel, rev, &state)
            .await?;
        Ok(())
    }

    /// Writes the rest, once the revision `rev` is stored with the first panel's record
    /// (whose chain stands at `first_chain`): the other panels' records (rare: most changes
    /// touch one panel) and a whole state where a chain has grown long.
    pub(crate) async fn finish(
        &self,
        repo: &mut Transaction,
        thread: &haico_store::ThreadId,
        rev: i64,
        first_chain: Option<haico_store::Chain>,
    ) -> Result<(), WorkspaceError> {
        for (i, (panel, whole, data)) in self.writes.iter().enumerate() {
            let chain = match (i, whole) {
                (0, _) => first_chain,
                (_, true) => {
                    repo.history()
                        .record_panel_state(thread, panel, rev, data)
                        .await?;
                    None
                }
                (_, false) => Some(
                    repo.history()
                        .record_panel_ops(thread, panel, rev, data)
                        .await?,
                ),
            };
            // A chain grown long enough ends with the panel's whole state, so reads stay short.
            if chain.is_some_and(wants_whole) {
                let state = whole_state(repo, thread, panel).await?;
                repo.history()
                    .record_panel_state(thread, panel, rev, &state)
                    .await?;
            }
        }
        Ok(())
    }
}

/// A panel's whole state as its history records it.
async fn whole_state(
    repo: &mut Transaction,
    thread: &haico_store::ThreadId,
    panel: &str,
) -> Result<String, WorkspaceError> {
    Ok(match panel {
        "document" => to_json(&repo.documents().get_document(thread).await?)?,
        "plan" => to_json(&repo.plan().plan_steps(thread).await?)?,
        "suggestions" => to_json(&repo.suggestions().suggestions(thread, None).await?)?,
        _ => to_json(&repo.preferences().list_preferences(thread).await?)?,
    })
}

/// The revision row of a change described by `note`.
pub(crate) fn revision_of<'a>(
    note: &'a ChangeNote,
    source: crate::workspace::announce::Source,
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
pub(super) fn set_whole<T: HasId + Clone>(ops: &[ListOp<T>]) -> Option<Vec<T>> {
    let last_set = ops
        .iter()
        .rposition(|op| matches!(op, ListOp::Set { .. }))?;
    let mut items = Vec::new();
    for op in &ops[last_set..] {
        apply_list(&mut items, op);
    }
    Some(items)
}

pub(super) fn to_json<T: Serialize + ?Sized>(value: &T) -> Result<String, WorkspaceError> {
    serde_json::to_string(value).map_err(|err| WorkspaceError::Store(err.into()))
}

/// What a committed change says about itself: it becomes the change's revision in the
/// thread's history (and its log line).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangeNote {
    /// One line on what changed: the envelope's summary for a tool call, a short description
    /// for a user edit.
    pub summary: String,
    /// The tool that made the change, on the agent path.
    pub tool: Option<String>,
    /// The agent's sentence on what it did and why, on the agent path.
    pub action_and_reasoning: Option<String>,
    /// The agent turn the change was made in (a tool call of a turn).
    pub turn_index: Option<i64>,
    /// Who made it, when known.
    pub by: Option<String>,
    /// For a restore: the revision it went back to.
    pub restored_from: Option<i64>,
    /// For an undone turn: that turn.
    pub reverted_turn: Option<i64>,
}

impl ChangeNote {
    /// A person's edit, described in a few words.
    pub fn user(summary: impl Into<String>) -> Self {
        Self {
            summary: summary.into(),
            ..Self::default()
        }
    }

    /// A tool call's change.
    pub fn tool(
        tool: impl Into<String>,
        action_and_reasoning: Option<String>,
        summary: impl Into<String>,
    ) -> Self {
        Self {
            summary: summary.into(),
            tool: Some(tool.into()),
            action_and_reasoning,
            ..Self::default()
        }
    }

    /// The same note, for a change made in agent turn `turn_index`.
    pub fn in_turn(self, turn_index: Option<i64>) -> Self {
        Self { turn_index, ..self }
    }
}
