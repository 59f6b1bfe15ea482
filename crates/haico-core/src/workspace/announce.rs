//! What a change announces: the JSON of every event on a thread's stream (SPEC section 4).
//!
//! Durable events are built here and appended to the thread's log by [`super::Edit::commit`];
//! the only transient one, `token`, is published by
//! [`Workspaces::announce_token`](super::Workspaces::announce_token) as the answer streams.

use serde::Serialize;
use serde_json::{Value, json};

use haico_store::{NewEvent, panels::PanelSet, usage::TurnUsage};

/// Which path a change came in by. It decides the lock rule (the agent path respects
/// preference locks, the user path overrides them) and is announced with the change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The agent, the tools endpoint or an MCP client: anything on the tool path.
    Agent,
    /// A person editing through the REST API or the UI.
    User,
}

impl Source {
    /// The name used in events and the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Agent => "agent",
            Source::User => "user",
        }
    }
}

/// An artifact as stored and announced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredArtifact {
    /// Its id.
    pub artifact_id: i64,
    /// Its type tag.
    pub artifact_type: String,
    /// Its title.
    pub title: Option<String>,
    /// Its content.
    pub payload: Value,
    /// The turn it belongs to.
    pub turn_index: i64,
}

/// `workspace` — `{panels, source}`: these panels changed; clients re-sync them.
pub fn workspace_event(panels: PanelSet, source: Source) -> NewEvent {
    NewEvent {
        event: "workspace",
        data: json!({ "panels": panels, "source": source }).to_string(),
    }
}

/// The panels and the source a stored `workspace` event names; `None` for data that is not
/// what [`workspace_event`] writes.
pub fn read_workspace_event(data: &str) -> Option<(PanelSet, Source)> {
    #[derive(serde::Deserialize)]
    struct Data<'a> {
        #[serde(borrow)]
        panels: Vec<&'a str>,
        source: &'a str,
    }
    let data: Data<'_> = serde_json::from_str(data).ok()?;
    let source = match data.source {
        "agent" => Source::Agent,
        "user" => Source::User,
        _ => return None,
    };
    let mut panels = PanelSet::default();
    for name in data.panels {
        panels.insert(haico_store::panels::Panel::parse(name)?);
    }
    Some((panels, source))
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
pub fn tool_call_event(
    tool: &str,
    action_and_reasoning: Option<&str>,
    arguments: &Value,
    result: &Value,
    turn_index: i64,
    duration_ms: f64,
) -> NewEvent {
    NewEvent {
        event: "step",
        data: json!({
            "tool": tool,
            "action_and_reasoning": action_and_reasoning,
            "arguments": arguments,
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

/// `done` — `{turn_index, status, usage}`, last event of a turn (`usage` is `null` for a turn
/// that another replica ended for it).
pub fn done_event(turn_index: i64, status: &str, usage: Option<&TurnUsage>) -> NewEvent {
    NewEvent {
        event: "done",
        data: json!({ "turn_index": turn_index, "status": status, "usage": usage }).to_string(),
    }
}

/// `token` — `{text}`, streamed answer text; transient (published, never stored).
pub fn token_data(text: &str) -> String {
    json!({ "text": text }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use haico_store::panels::Panel;

    #[test]
    fn a_workspace_event_reads_back_as_written() {
        let panels: PanelSet = [Panel::Plan, Panel::Document].into_iter().collect();
        let event = workspace_event(panels, Source::User);
        assert_eq!(
            read_workspace_event(&event.data),
            Some((panels, Source::User))
        );
        assert_eq!(
            read_workspace_event("{\"panels\": [\"nope\"], \"source\": \"agent\"}"),
            None
        );
        assert_eq!(read_workspace_event("not json"), None);
    }
}
