//! The request body of `POST /chat/completions`, named as in OpenAI's API reference, and its
//! construction from a [`ModelRequest`].

use serde::Serialize;
use serde_json::Value;

use crate::agent::model::{
    ChatMessage, ModelRequest, SnapshotRole, ToolCallRequest, ToolDefinition,
};

/// `CreateChatCompletionRequest`, streaming.
#[derive(Debug, Serialize)]
pub struct ChatCompletionRequest {
    pub model: String,
    pub messages: Vec<ChatCompletionMessage>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ChatCompletionTool>,
    /// `max_tokens` rather than `max_completion_tokens`: every OpenAI-compatible server
    /// understands it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    pub stream: bool,
    pub stream_options: StreamOptions,
}

/// `stream_options`: asks for a final chunk carrying the token usage.
#[derive(Debug, Serialize)]
pub struct StreamOptions {
    pub include_usage: bool,
}

/// `ChatCompletionRequestMessage`, tagged by `role`.
#[derive(Debug, Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum ChatCompletionMessage {
    System {
        content: String,
    },
    User {
        content: String,
    },
    Assistant {
        /// `null` when the message only calls tools.
        content: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ChatCompletionMessageToolCall>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

/// The only tool type Chat Completions has.
#[derive(Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolType {
    Function,
}

/// `ChatCompletionTool`.
#[derive(Debug, Serialize)]
pub struct ChatCompletionTool {
    #[serde(rename = "type")]
    pub kind: ToolType,
    pub function: FunctionDefinition,
}

/// `FunctionDefinition`.
#[derive(Debug, Serialize)]
pub struct FunctionDefinition {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// `ChatCompletionMessageToolCall`: a call of an earlier assistant message.
#[derive(Debug, Serialize)]
pub struct ChatCompletionMessageToolCall {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: ToolType,
    pub function: FunctionCall,
}

/// `function` of a tool call; `arguments` is the model's text, sent back unchanged when it is a
/// JSON object.
#[derive(Debug, Serialize)]
pub struct FunctionCall {
    pub name: String,
    pub arguments: String,
}

impl ChatCompletionRequest {
    /// The streaming request for `model`: the instructions, the conversation, then the
    /// workspace snapshot as the last message.
    pub fn new(model: &str, request: &ModelRequest) -> Self {
        let system = (!request.system.is_empty()).then(|| ChatCompletionMessage::System {
            content: request.system.clone(),
        });
        let snapshot = (!request.snapshot.is_empty()).then(|| {
            let content = request.snapshot.clone();
            match request.snapshot_role {
                SnapshotRole::System => ChatCompletionMessage::System { content },
                SnapshotRole::User => ChatCompletionMessage::User { content },
            }
        });
        Self {
            model: model.to_string(),
            messages: system
                .into_iter()
                .chain(request.messages.iter().map(ChatCompletionMessage::from))
                .chain(snapshot)
                .collect(),
            tools: request.tools.iter().map(ChatCompletionTool::from).collect(),
            max_tokens: request.max_tokens,
            stream: true,
            stream_options: StreamOptions {
                include_usage: true,
            },
        }
    }
}

impl From<&ChatMessage> for ChatCompletionMessage {
    fn from(message: &ChatMessage) -> Self {
        match message {
            ChatMessage::User { content } => Self::User {
                content: content.clone(),
            },
            ChatMessage::Assistant {
                content,
                tool_calls,
            } => Self::Assistant {
                content: (!content.is_empty() || tool_calls.is_empty()).then(|| content.clone()),
                tool_calls: tool_calls
                    .iter()
                    .map(ChatCompletionMessageToolCall::from)
                    .collect(),
            },
            ChatMessage::Tool {
                call_id, content, ..
            } => Self::Tool {
                tool_call_id: call_id.clone(),
                content: content.clone(),
            },
        }
    }
}

impl From<&ToolCallRequest> for ChatCompletionMessageToolCall {
    /// Arguments go back as the model wrote them when they are a JSON object. Anything else
    /// (cut off by the answer's token limit, say) goes back as `{}`, with the tool result that
    /// follows saying what was wrong: llama.cpp's server, and others that render the call
    /// through a chat template, parse the arguments of every earlier call and refuse the whole
    /// request (HTTP 500) when one does not parse, which would end the turn.
    fn from(call: &ToolCallRequest) -> Self {
        let is_object = serde_json::from_str::<serde_json::Value>(&call.arguments)
            .is_ok_and(|value| value.is_object());
        Self {
            id: call.id.clone(),
            kind: ToolType::Function,
            function: FunctionCall {
                name: call.name.clone(),
                arguments: if is_object {
                    call.arguments.clone()
                } else {
                    "{}".to_string()
                },
            },
        }
    }
}

impl From<&ToolDefinition> for ChatCompletionTool {
    fn from(tool: &ToolDefinition) -> Self {
        Self {
            kind: ToolType::Function,
            function: FunctionDefinition {
                name: tool.name.clone(),
                description: tool.description.clone(),
                parameters: tool.parameters.clone(),
            },
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_conversation_becomes_chat_completion_messages() {
        let request = ModelRequest {
            system: "be brief".into(),
            messages: vec![
                ChatMessage::user("plan my trip"),
                ChatMessage::assistant(
                    "",
                    vec![ToolCallRequest {
                        id: "call_1".into(),
                        name: "add_todos".into(),
                        arguments: "{\"steps\": [".into(),
                    }],
                ),
                ChatMessage::tool("call_1", "add_todos", "{\"success\":false}"),
            ],
            snapshot: "<plan>\n(empty)\n</plan>".into(),
            tools: vec![],
            ..ModelRequest::default()
        };
        let body = serde_json::to_value(ChatCompletionRequest::new("m", &request)).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "m",
                "messages": [
                    {"role": "system", "content": "be brief"},
                    {"role": "user", "content": "plan my trip"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "call_1", "type": "function",
                         "function": {"name": "add_todos", "arguments": "{}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "call_1", "content": "{\"success\":false}"},
                    {"role": "system", "content": "<plan>\n(empty)\n</plan>"}
                ],
                "stream": true,
                "stream_options": {"include_usage": true}
            })
        );
    }

    #[test]
    fn the_snapshot_can_travel_as_a_user_message() {
        let request = ModelRequest {
            system: "head".into(),
            messages: vec![ChatMessage::user("hi")],
            snapshot: "now".into(),
            snapshot_role: SnapshotRole::User,
            ..ModelRequest::default()
        };
        let body = serde_json::to_value(ChatCompletionRequest::new("m", &request)).unwrap();
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "head"},
                {"role": "user", "content": "hi"},
                {"role": "user", "content": "now"}
            ])
        );
    }
}
