//! Turns, messages and tool calls: the conversation beside the workspace, persisted so a
//! thread can be reloaded, replayed and studied.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::usage::TurnUsage;

use super::repository::repository;
use crate::thread_id::ThreadId;
use crate::{
    error::Context, error::StoreError, leases::TurnLease, query::params, query::row_shape,
    repository::now,
};

/// How a turn ended (or that it has not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnStatus {
    /// The agent is still working.
    Running,
    /// The agent answered.
    Completed,
    /// The model or the server failed; the tool calls that ran are kept.
    Failed,
    /// The user stopped it.
    Cancelled,
}

impl TurnStatus {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TurnStatus::Running => "running",
            TurnStatus::Completed => "completed",
            TurnStatus::Failed => "failed",
            TurnStatus::Cancelled => "cancelled",
        }
    }
}

/// One recorded tool call of a turn (a "step" on the wire).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredToolCall {
    /// Position in the turn, from 1 (`step_index` on the wire).
    pub call_index: i64,
    /// The tool's name as the model called it.
    pub tool: String,
    /// The arguments, without `action_and_reasoning`.
    pub arguments: Value,
    /// The agent's sentence for the reasoning trace.
    pub action_and_reasoning: Option<String>,
    /// The envelope.
    pub result: Value,
    /// Whether the call succeeded.
    pub success: bool,
    /// How long it took.
    pub duration_ms: f64,
    /// When it finished.
    pub created_at: DateTime<Utc>,
}

/// A message of the conversation.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct MessageRecord {
    /// Message id.
    pub id: i64,
    /// `user` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
    /// When it was written.
    pub created_at: DateTime<Utc>,
    /// Who wrote it: the person, for a user message sent while signed in (absent in
    /// one-person mode and for the agent's answers).
    #[sqlx(rename = "by_name")]
    pub by: Option<String>,
}

/// One turn with everything that happened in it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredTurn {
    /// The turn's number in its thread, from 1.
    pub turn_index: i64,
    /// Running, completed, failed or cancelled.
    pub status: String,
    /// Why it failed, if it did.
    pub error: Option<String>,
    /// When it started.
    pub started_at: DateTime<Utc>,
    /// When it ended.
    pub finished_at: Option<DateTime<Utc>>,
    /// The user's message and the agent's answer, in order.
    pub messages: Vec<MessageRecord>,
    /// The tool calls, in order (`steps` on the wire).
    pub tool_calls: Vec<StoredToolCall>,
    /// What the turn cost in model tokens and time, once it has ended (`null` while it runs,
    /// and for turns recorded before haico counted tokens).
    pub usage: Option<TurnUsage>,
}

#[derive(sqlx::FromRow)]
struct TurnRow {
    turn_index: i64,
    status: String,
    error: Option<String>,
    started_at: DateTime<Utc>,
    finished_at: Option<DateTime<Utc>>,
    usage: Option<String>,
}

#[derive(sqlx::FromRow)]
struct MessageRow {
    turn_index: i64,
    #[sqlx(flatten)]
    message: MessageRecord,
}

#[derive(sqlx::FromRow)]
struct ToolCallRow {
    turn_index: i64,
    call_index: i64,
    tool: String,
    arguments: String,
    action_and_reasoning: Option<String>,
    result: String,
    success: bool,
    duration_ms: f64,
    created_at: DateTime<Utc>,
}

row_shape!(MessageRecord {
    id: i64,
    role: String,
    content: String,
    created_at: DateTime<Utc>,
    by_name: Option<String>,
} => MessageRecord { id, role, content, created_at, by: by_name });

row_shape!(TurnRow {
    turn_index: i64,
    status: String,
    error: Option<String>,
    started_at: DateTime<Utc>,
    finished_at: Option<DateTime<Utc>>,
    usage: Option<String>,
} => TurnRow { turn_index, status, error, started_at, finished_at, usage });

row_shape!(MessageRow {
    turn_index: i64,
    id: i64,
    role: String,
    content: String,
    created_at: DateTime<Utc>,
    by_name: Option<String>,
} => MessageRow {
    turn_index,
    message: MessageRecord { id, role, content, created_at, by: by_name },
});

row_shape!(ToolCallRow {
    turn_index: i64,
    call_index: i64,
    tool: String,
    arguments: String,
    action_and_reasoning: Option<String>,
    result: String,
    success: bool,
    duration_ms: f64,
    created_at: DateTime<Utc>,
} => ToolCallRow {
    turn_index,
    call_index,
    tool,
    arguments,
    action_and_reasoning,
    result,
    success,
    duration_ms,
    created_at,
});

/// A tool call of a turn to record.
#[derive(Debug, Clone, Copy)]
pub struct NewToolCall<'a> {
    /// The turn it belongs to.
    pub turn_index: i64,
    /// Its position in the turn, from 1.
    pub call_index: i64,
    /// The tool's name.
    pub tool: &'a str,
    /// The arguments (JSON).
    pub arguments: &'a Value,
    /// The agent's sentence.
    pub action_and_reasoning: Option<&'a str>,
    /// The envelope (JSON).
    pub result: &'a Value,
    /// Whether it succeeded.
    pub success: bool,
    /// How long it took.
    pub duration_ms: f64,
}

repository!(
    /// The conversation: turns, messages and tool calls.
    TurnsRepo,
    turns
);

impl TurnsRepo<'_> {
    /// Opens the thread's next turn as `running`, held by `lease`, and returns its index. At
    /// most one turn per thread runs at a time, enforced by a unique index: a second one is
    /// [`StoreError::AlreadyExists`]. `None` when the thread does not exist.
    pub async fn open_turn(
        &mut self,
        thread_id: &ThreadId,
        lease: TurnLease<'_>,
    ) -> Result<Option<i64>, StoreError> {
        let Some(turn) = self.threads().begin_turn(thread_id).await? else {
            return Ok(None);
        };
        let at = now();
        let result = self
            .execute(
                "INSERT INTO turns (thread_id, turn_index, status, started_at, owner, \
                 lease_until_ms) VALUES ($1, $2, 'running', $3, $4, $5)",
                &params![thread_id, turn, at, lease.owner, lease.until_ms],
            )
            .await
            .context("opening a turn");
        match result {
            Ok(_) => Ok(Some(turn)),
            Err(err) if err.is_unique_violation() => Err(StoreError::AlreadyExists(format!(
                "a running turn on thread {thread_id:?}"
            ))),
            Err(err) => Err(err),
        }
    }

    /// Records how a turn ended; `false` when it was no longer running (another replica
    /// ended it because its lease ran out), in which case nothing changed.
    pub async fn close_turn(
        &mut self,
        thread_id: &ThreadId,
        turn_index: i64,
        status: TurnStatus,
        error: Option<&str>,
        usage: Option<&TurnUsage>,
    ) -> Result<bool, StoreError> {
        let at = now();
        let usage = usage.map(serde_json::to_string).transpose()?;
        let closed = self
            .execute(
                "UPDATE turns SET status = $3, error = $4, finished_at = $5, usage = $6 \
                 WHERE thread_id = $1 AND turn_index = $2 AND status = 'running'",
                &params![
                    thread_id,
                    turn_index,
                    status.as_str(),
                    error,
                    at,
                    usage.as_ref()
                ],
            )
            .await
            .context("closing a turn")?;
        Ok(closed == 1)
    }

    /// Stores a message of a turn, written by the person named `by` when known.
    pub async fn add_message(
        &mut self,
        thread_id: &ThreadId,
        turn_index: i64,
        role: &str,
        content: &str,
        by: Option<&str>,
    ) -> Result<i64, StoreError> {
        let at = now();
        let (id,): (i64,) = self
            .fetch_one(
                "INSERT INTO messages (thread_id, turn_index, role, content, created_at, by_name) \
                 VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
                &params![thread_id, turn_index, role, content, at, by],
            )
            .await
            .context("storing a message")?;
        Ok(id)
    }

    /// Stores a tool call of a turn.
    pub async fn add_tool_call(
        &mut self,
        thread_id: &ThreadId,
        call: NewToolCall<'_>,
    ) -> Result<(), StoreError> {
        let at = now();
        let arguments = serde_json::to_string(call.arguments)?;
        let result = serde_json::to_string(call.result)?;
        self.execute(
            "INSERT INTO tool_calls (thread_id, turn_index, call_index, tool, arguments, \
                 action_and_reasoning, result, success, duration_ms, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            &params![
                thread_id,
                call.turn_index,
                call.call_index,
                call.tool,
                &arguments,
                call.action_and_reasoning,
                &result,
                call.success,
                call.duration_ms,
                at
            ],
        )
        .await
        .context("storing a tool call")?;
        Ok(())
    }

    /// The conversation: every turn with its messages and tool calls, oldest first.
    pub async fn conversation(
        &mut self,
        thread_id: &ThreadId,
    ) -> Result<Vec<StoredTurn>, StoreError> {
        let turns: Vec<TurnRow> = self
            .fetch_all(
                "SELECT turn_index, status, error, started_at, finished_at, usage FROM turns \
                 WHERE thread_id = $1 ORDER BY turn_index",
                &params![thread_id],
            )
            .await
            .context("reading turns")?;
        let messages: Vec<MessageRow> = self
            .fetch_all(
                "SELECT turn_index, id, role, content, created_at, by_name FROM messages \
                 WHERE thread_id = $1 ORDER BY id",
                &params![thread_id],
            )
            .await
            .context("reading messages")?;
        let calls: Vec<ToolCallRow> = self
            .fetch_all(
                "SELECT turn_index, call_index, tool, arguments, action_and_reasoning, result, \
                 success, duration_ms, created_at FROM tool_calls \
                 WHERE thread_id = $1 ORDER BY turn_index, call_index",
                &params![thread_id],
            )
            .await
            .context("reading tool calls")?;
        let mut out: Vec<StoredTurn> = turns
            .into_iter()
            .map(|t| StoredTurn {
                turn_index: t.turn_index,
                status: t.status,
                error: t.error,
                started_at: t.started_at,
                finished_at: t.finished_at,
                messages: Vec::new(),
                tool_calls: Vec::new(),
                // A usage this build cannot read (a later one's) is left out, not an error
                // that would hide the whole conversation.
                usage: t.usage.and_then(|text| serde_json::from_str(&text).ok()),
            })
            .collect();
        for row in messages {
            if let Some(turn) = out.iter_mut().find(|t| t.turn_index == row.turn_index) {
                turn.messages.push(row.message);
            }
        }
        for row in calls {
            if let Some(turn) = out.iter_mut().find(|t| t.turn_index == row.turn_index) {
                turn.tool_calls.push(StoredToolCall {
                    call_index: row.call_index,
                    tool: row.tool,
                    arguments: serde_json::from_str(&row.arguments)?,
                    action_and_reasoning: row.action_and_reasoning,
                    result: serde_json::from_str(&row.result)?,
                    success: row.success,
                    duration_ms: row.duration_ms,
                    created_at: row.created_at,
                });
            }
        }
        Ok(out)
    }

    /// The user and assistant messages of turns before `before_turn`, oldest first, for the
    /// model's history.
    pub async fn history(
        &mut self,
        thread_id: &ThreadId,
        before_turn: i64,
    ) -> Result<Vec<(i64, String, String)>, StoreError> {
        let rows: Vec<(i64, String, String)> = self
            .fetch_all(
                "SELECT turn_index, role, content FROM messages \
                 WHERE thread_id = $1 AND turn_index < $2 ORDER BY id",
                &params![thread_id, before_turn],
            )
            .await
            .context("reading history")?;
        Ok(rows)
    }
}
