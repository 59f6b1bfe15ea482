//! Recordings: a thread as JSON Lines (`haico-recording/1`), for study and backup.
//!
//! A recording holds the thread, its turns, messages and tool calls, every revision with what
//! it changed (the same records the history keeps, so the workspace at every revision comes
//! back exactly), and the artifacts with their payloads, in order of occurrence. An import is
//! checked whole before anything is written; a recording that is not valid is refused with the
//! line number and the reason. Plan steps and preferences get new ids on import (ids are unique
//! across a database), consistently in every revision. `docs/RECORDING.md` describes the lines
//! field by field.

mod checks;
mod export;
mod ids;
mod import;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::wire::ForkOrigin;
use crate::workspace::error::WorkspaceError;
use checks::*;
use ids::*;

/// The format named on a recording's first line.
pub const FORMAT: &str = "haico-recording/1";

/// One line of a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Line {
    /// The first line: the thread.
    Thread {
        /// Always `haico-recording/1`.
        format: String,
        /// The thread's id where it was recorded.
        id: String,
        /// Its title.
        title: String,
        /// When it was made.
        created_at: DateTime<Utc>,
        /// Where it was forked from, if it was.
        forked_from: Option<ForkOrigin>,
        /// Which MCP servers its agent may use, when narrowed (absent: all, and in recordings
        /// made before threads could narrow them).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mcp_servers: Option<Vec<String>>,
    },
    /// An agent turn.
    Turn {
        /// Its number, from 1.
        turn_index: i64,
        /// `running`, `completed`, `failed` or `cancelled`.
        status: String,
        /// Why it did not complete.
        error: Option<String>,
        /// When it started.
        started_at: DateTime<Utc>,
        /// When it ended.
        finished_at: Option<DateTime<Utc>>,
        /// What its model calls cost (absent in recordings made before haico counted tokens).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<haico_store::usage::TurnUsage>,
    },
    /// A message of a turn.
    Message {
        /// Its turn.
        turn_index: i64,
        /// `user` or `assistant`.
        role: String,
        /// The text.
        content: String,
        /// When it was written.
        at: DateTime<Utc>,
        /// Who wrote it, when known.
        by: Option<String>,
    },
    /// A tool call of a turn.
    Step {
        /// Its turn.
        turn_index: i64,
        /// Its position in the turn, from 1.
        step_index: i64,
        /// The tool.
        tool: String,
        /// The arguments, without `action_and_reasoning`.
        arguments: Value,
        /// The agent's sentence.
        action_and_reasoning: Option<String>,
        /// The envelope.
        result: Value,
        /// Whether it succeeded.
        success: bool,
        /// How long it took.
        duration_ms: f64,
        /// When it finished.
        at: DateTime<Utc>,
    },
    /// A revision and what it changed.
    Revision {
        /// Its number, from 1.
        rev: i64,
        /// When it was committed.
        at: DateTime<Utc>,
        /// `agent` or `user`.
        source: String,
        /// Who made it, when known.
        by: Option<String>,
        /// The agent turn it was made in.
        turn_index: Option<i64>,
        /// The thread's turn counter then.
        thread_turn: i64,
        /// The tool that made it.
        tool: Option<String>,
        /// The agent's sentence.
        action_and_reasoning: Option<String>,
        /// The panels it changed.
        panels: Vec<String>,
        /// What changed.
        summary: String,
        /// For a restore: the revision it went back to.
        restored_from: Option<i64>,
        /// For an undone turn: that turn.
        reverted_turn: Option<i64>,
        /// Per changed panel: its whole state, or the operations from the previous state.
        changes: Vec<PanelChange>,
    },
    /// An artifact, with its payload.
    Artifact {
        /// Its id where it was recorded.
        id: i64,
        /// Its type tag.
        artifact_type: String,
        /// Its title.
        title: Option<String>,
        /// Its content.
        payload: Value,
        /// The turn that made it.
        turn_index: i64,
        /// The revision that made it.
        rev: i64,
        /// When it was stored.
        at: DateTime<Utc>,
    },
}

/// What one revision did to one panel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PanelChange {
    /// `objective`, `document`, `plan` or `preferences`.
    pub panel: String,
    /// Whether `data` is the panel's whole state (else operations on the previous state).
    pub whole: bool,
    /// The state or the operations.
    pub data: Value,
}

/// Something wrong with a recording: the line (from 1) and why.
fn bad(line: usize, reason: impl std::fmt::Display) -> WorkspaceError {
    WorkspaceError::invalid(format!("line {line}: {reason}"))
}

/// The lines as JSON Lines text, one object per line, each line ending in `\n`.
pub fn to_jsonl(lines: &[Line]) -> Result<String, WorkspaceError> {
    let mut out = String::new();
    for line in lines {
        out.push_str(
            &serde_json::to_string(line).map_err(|err| WorkspaceError::Store(err.into()))?,
        );
        out.push('\n');
    }
    Ok(out)
}
