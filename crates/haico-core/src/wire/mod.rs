//! The shapes haico publishes that more than one adapter shows: a thread, the panels, the
//! workspace, a revision, a suggested edit. REST bodies, event payloads, MCP resources, tool
//! envelopes and recordings serialize these, never the store's rows, so renaming a column or
//! reshaping a row is a change inside the store and cannot change what clients read.
//!
//! Each type is made from its store counterpart by an explicit `From`, which is where a column
//! and a published field meet. Shapes only one adapter publishes live with that adapter (REST's
//! in `http/wire/`). This module sits beside the domain: it uses the store's types and the
//! shared pieces below it, and the domain (recordings, events) and the adapters use it.

mod history;
mod workspace;

pub use history::Revision;
pub use workspace::{
    Artifact, ArtifactSummary, Document, ForkOrigin, PlanStep, Preference, SuggestedEdit, Thread,
    ThreadMay, Workspace,
};

/// The published shapes of a list of the store's rows, in order.
pub fn list<R, W: From<R>>(rows: Vec<R>) -> Vec<W> {
    rows.into_iter().map(W::from).collect()
}
