//! The JSON shapes of the events the tool layer emits (SPEC section 4).

use serde::Serialize;
use serde_json::json;

use serde_json::Value;

use crate::{
    panels::PanelSet,
    store::NewEvent,
    tools::{StoredArtifact, ToolCall},
};

/// Who made a workspace change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EventSource {
    /// The agent, the tools endpoint or an MCP client: anything on the tool path.
    Agent,
    /// A person editing through the REST API or the UI.
    User,
}

/// `workspace` — `{panels, source}`: these panels changed; clients re-sync them.
pub fn workspace_event(panels: PanelSet, source: EventSource) -> NewEvent {
    NewEvent {
        event: "workspace",
        data: json!({ "panels": panels, "source": source }).to_string(),
    }
}

/// `artifact` — `{artifact_id, artifact_type, title, payload, turn_index}`.
pub fn artifact_event(artifact: &StoredArtifact) -> NewEvent {
    NewEvent {
        event: "artifact",
        data: serde_json::to_string(artifact).unwrap_or_else(|_| "{}".to_string()),
    }
}

/// `step` — `{tool, action_and_reasoning, arguments, result, turn_index, duration_ms}`, after
/// each tool call of a turn; `result` is the envelope object.
pub fn step_event(call: &ToolCall, result: &Value, turn_index: i64, duration_ms: f64) -> NewEvent {
    NewEvent {
        event: "step",
        data: json!({
            "tool": call.tool,
            "action_and_reasoning": call.action_and_reasoning,
            "arguments": call.arguments,
            "result": result,
            "turn_index": turn_index,
            "duration_ms": duration_ms,
        })
        .to_string(),
    }
}

/// `turn` — `{turn_index}`, first event of a turn.
pub fn turn_event(turn_index: i64) -> NewEvent {
    NewEvent {
        event: "turn",
        data: json!({ "turn_index": turn_index }).to_string(),
    }
}

/// `message` — `{content, turn_index}`, the agent's final answer.
pub fn message_event(content: &str, turn_index: i64) -> NewEvent {
    NewEvent {
        event: "message",
        data: json!({ "content": content, "turn_index": turn_index }).to_string(),
    }
}

/// `error` — `{message, turn_index}`, a turn failed or was cancelled.
pub fn error_event(message: &str, turn_index: i64) -> NewEvent {
    NewEvent {
        event: "error",
        data: json!({ "message": message, "turn_index": turn_index }).to_string(),
    }
}

/// `done` — `{turn_index, status}`, last event of a turn.
pub fn done_event(turn_index: i64, status: &str) -> NewEvent {
    NewEvent {
        event: "done",
        data: json!({ "turn_index": turn_index, "status": status }).to_string(),
    }
}

/// `token` — `{text}`, streamed answer text; transient (never stored).
pub fn token_data(text: &str) -> String {
    json!({ "text": text }).to_string()
}
