//! A revision as clients read it (`GET …/history`, MCP's history resource).

use chrono::{DateTime, Utc};
use serde::Serialize;

use haico_store as store;

/// A revision as stored and listed.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Revision {
    /// Its number in the thread, from 1.
    pub rev: i64,
    /// When it was committed.
    pub at: DateTime<Utc>,
    /// `agent` (a tool call: the agent, the tools endpoint, MCP) or `user` (a person's edit, a
    /// restore, a revert, a fork).
    pub source: String,
    /// Who made it, when known.
    pub by: Option<String>,
    /// The agent turn it was made in.
    pub turn_index: Option<i64>,
    /// The tool that made it.
    pub tool: Option<String>,
    /// The agent's sentence on what it did and why.
    pub action_and_reasoning: Option<String>,
    /// The panels it changed (`objective`, `document`, `plan`, `preferences`, `artifacts`).
    pub panels: Vec<String>,
    /// What changed, in one line.
    pub summary: String,
    /// For a restore: the revision it went back to.
    pub restored_from: Option<i64>,
    /// For an undone turn: that turn.
    pub reverted_turn: Option<i64>,
}

impl From<store::Revision> for Revision {
    fn from(r: store::Revision) -> Self {
        Revision {
            rev: r.rev,
            at: r.at,
            source: r.source,
            by: r.by,
            turn_index: r.turn_index,
            tool: r.tool,
            action_and_reasoning: r.action_and_reasoning,
            panels: r.panels.iter().map(|p| p.as_str().to_string()).collect(),
            summary: r.summary,
            restored_from: r.restored_from,
            reverted_turn: r.reverted_turn,
        }
    }
}
