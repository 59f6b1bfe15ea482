//! The conversation as `GET …/messages` answers it: turns with their messages and tool calls
//! (`steps` on the wire).

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use haico_store as store;

use haico_store::usage::TurnUsage;

/// One recorded tool call of a turn (a "step" on the wire).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct ToolCallRecord {
    /// Position in the turn, from 1 (`step_index` on the wire).
    #[serde(rename = "step_index")]
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

impl From<store::StoredToolCall> for ToolCallRecord {
    fn from(c: store::StoredToolCall) -> Self {
        ToolCallRecord {
            call_index: c.call_index,
            tool: c.tool,
            arguments: c.arguments,
            action_and_reasoning: c.action_and_reasoning,
            result: c.result,
            success: c.success,
            duration_ms: c.duration_ms,
            created_at: c.created_at,
        }
    }
}

/// A message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
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
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub by: Option<String>,
    /// The text rendered to sanitised HTML; never stored, filled in only by
    /// `GET …/messages?html=true`, on the assistant's messages.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub html: Option<String>,
}

impl From<store::MessageRecord> for MessageRecord {
    fn from(m: store::MessageRecord) -> Self {
        MessageRecord {
            id: m.id,
            role: m.role,
            content: m.content,
            created_at: m.created_at,
            by: m.by,
            html: None,
        }
    }
}

/// One turn with everything that happened in it.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct TurnRecord {
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
    #[serde(rename = "steps")]
    pub tool_calls: Vec<ToolCallRecord>,
    /// What the turn cost in model tokens and time, once it has ended (`null` while it runs,
    /// and for turns recorded before haico counted tokens).
    pub usage: Option<TurnUsage>,
}

impl From<store::StoredTurn> for TurnRecord {
    fn from(t: store::StoredTurn) -> Self {
        TurnRecord {
            turn_index: t.turn_index,
            status: t.status,
            error: t.error,
            started_at: t.started_at,
            finished_at: t.finished_at,
            messages: t.messages.into_iter().map(MessageRecord::from).collect(),
            tool_calls: t.tool_calls.into_iter().map(ToolCallRecord::from).collect(),
            usage: t.usage,
        }
    }
}
