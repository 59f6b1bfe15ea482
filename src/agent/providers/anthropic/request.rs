//! The request body of `POST /v1/messages`, named as in Anthropic's API reference, and its
//! construction from a [`ModelRequest`].
//!
//! The Messages API wants strictly alternating `user` / `assistant` turns, tool results as
//! `tool_result` blocks of a user message, and no empty text blocks; the conversion takes care
//! of all three, merging neighbours of the same role into one message.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::agent::model::{ChatMessage, ModelRequest, ToolCallRequest, ToolDefinition};

/// `max_tokens` when the caller sets none (the API requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// `MessageCreateParams`, streaming.
#[derive(Debug, Serialize)]
pub struct MessageCreateParams {
    pub model: String,
    pub max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    pub messages: Vec<MessageParam>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolParam>,
    pub stream: bool,
}

/// `MessageParam`.
#[derive(Debug, Serialize)]
pub struct MessageParam {
    pub role: Role,
    pub content: Vec<ContentBlockParam>,
}

/// Who speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

/// The content blocks haico sends, tagged by `type`.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlockParam {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        content: String,
    },
}

/// `ToolParam`: a tool the model may call.
#[derive(Debug, Serialize)]
pub struct ToolParam {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

impl MessageCreateParams {
    /// The streaming request for `model`.
    pub fn new(model: &str, request: &ModelRequest) -> Self {
        Self {
            model: model.to_string(),
            max_tokens: request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            system: (!request.system.is_empty()).then(|| request.system.clone()),
            messages: messages(&request.messages),
            tools: request.tools.iter().map(ToolParam::from).collect(),
            stream: true,
        }
    }
}

/// The conversation as alternating messages: consecutive tool results (and a user message
/// after them) share one user message; empty text is left out.
pub fn messages(conversation: &[ChatMessage]) -> Vec<MessageParam> {
    let mut out: Vec<MessageParam> = Vec::new();
    for message in conversation {
        let (role, blocks) = match message {
            ChatMessage::User { content } => (Role::User, text_block(content)),
            ChatMessage::Assistant {
                content,
                tool_calls,
            } => {
                let mut blocks = text_block(content);
                blocks.extend(tool_calls.iter().map(ContentBlockParam::from));
                (Role::Assistant, blocks)
            }
            ChatMessage::Tool {
                call_id, content, ..
            } => (
                Role::User,
                vec![ContentBlockParam::ToolResult {
                    tool_use_id: call_id.clone(),
                    content: content.clone(),
                }],
            ),
        };
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => out.push(MessageParam {
                role,
                content: blocks,
            }),
        }
    }
    out
}

fn text_block(text: &str) -> Vec<ContentBlockParam> {
    if text.trim().is_empty() {
        Vec::new()
    } else {
        vec![ContentBlockParam::Text {
            text: text.to_string(),
        }]
    }
}

impl From<&ToolCallRequest> for ContentBlockParam {
    /// A `tool_use` block must carry an object; arguments the model wrote malformed are sent
    /// back as `{}` (the tool result that follows explains what was wrong).
    fn from(call: &ToolCallRequest) -> Self {
        let input = match serde_json::from_str::<Value>(&call.arguments) {
            Ok(Value::Object(object)) => Value::Object(object),
            _ => Value::Object(Map::new()),
        };
        Self::ToolUse {
            id: call.id.clone(),
            name: call.name.clone(),
            input,
        }
    }
}

impl From<&ToolDefinition> for ToolParam {
    fn from(tool: &ToolDefinition) -> Self {
        Self {
            name: tool.name.clone(),
            description: tool.description.clone(),
            input_schema: tool.parameters.clone(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(id: &str, arguments: &str) -> ToolCallRequest {
        ToolCallRequest {
            id: id.into(),
            name: "toggle_todos".into(),
            arguments: arguments.into(),
        }
    }

    #[test]
    fn tool_results_are_grouped_in_one_user_message() {
        let conversation = vec![
            ChatMessage::user("tick both"),
            ChatMessage::assistant(
                "",
                vec![call("t1", r#"{"indices":[1]}"#), call("t2", "{oops")],
            ),
            ChatMessage::tool("t1", "toggle_todos", "ok1"),
            ChatMessage::tool("t2", "toggle_todos", "bad"),
            ChatMessage::user("thanks"),
        ];
        let json = serde_json::to_value(messages(&conversation)).unwrap();
        assert_eq!(
            json,
            json!([
                {"role": "user", "content": [{"type": "text", "text": "tick both"}]},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "t1", "name": "toggle_todos", "input": {"indices": [1]}},
                    {"type": "tool_use", "id": "t2", "name": "toggle_todos", "input": {}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "ok1"},
                    {"type": "tool_result", "tool_use_id": "t2", "content": "bad"},
                    {"type": "text", "text": "thanks"}
                ]}
            ])
        );
    }

    #[test]
    fn max_tokens_defaults_and_system_is_top_level() {
        let request = ModelRequest {
            system: "sys".into(),
            messages: vec![ChatMessage::user("hi")],
            ..ModelRequest::default()
        };
        let body = serde_json::to_value(MessageCreateParams::new("claude", &request)).unwrap();
        assert_eq!(body["max_tokens"], json!(DEFAULT_MAX_TOKENS));
        assert_eq!(body["system"], json!("sys"));
        assert!(body.get("tools").is_none());
    }
}
