//! The request body of `POST /chat/completions`, named as in OpenAI's API reference, and its
//! construction from a [`ModelRequest`].

use serde::Serialize;
use serde_json::Value;

use crate::agent::model::{
    ChatMessage, ModelRequest, SnapshotRole, ToolCallRequest, ToolChoice, ToolDefinition,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    pub stream: bool,
    pub stream_options: StreamOptions,
    /// The server's own options (`HAICO_LLM_EXTRA_BODY`); the configuration refuses keys this
    /// struct sends itself, so none is sent twice.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, Value>,
}

/// The fields [`ChatCompletionRequest`] sends itself, which `HAICO_LLM_EXTRA_BODY` may not set.
pub const OWN_FIELDS: &[&str] = &[
    "model",
    "messages",
    "tools",
    "max_tokens",
    "tool_choice",
    "parallel_tool_calls",
    "temperature",
    "seed",
    "stream",
    "stream_options",
];

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
            // Without tools there is nothing to choose or to call in parallel.
            tool_choice: match request.tool_choice {
                _ if request.tools.is_empty() => None,
                ToolChoice::Auto => None,
                ToolChoice::Required => Some("required"),
                ToolChoice::None => Some("none"),
            },
            parallel_tool_calls: request
                .sampling
                .parallel_tool_calls
                .filter(|_| !request.tools.is_empty()),
            temperature: request.sampling.temperature,
            seed: request.sampling.seed,
            stream: true,
            stream_options: StreamOptions {
                include_usage: true,
            },
            extra: request.sampling.extra.clone(),
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
    fn sampling_and_tool_choice_are_sent_only_when_set() {
        let tool = ToolDefinition {
            name: "t".into(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
        };
        let mut extra = serde_json::Map::new();
        extra.insert("repeat_penalty".into(), json!(1.1));
        let request = ModelRequest {
            messages: vec![ChatMessage::user("hi")],
            tools: vec![tool],
            tool_choice: ToolChoice::Required,
            sampling: crate::agent::model::Sampling {
                temperature: Some(0.0),
                seed: Some(7),
                parallel_tool_calls: Some(false),
                extra,
            },
            ..ModelRequest::default()
        };
        let body = serde_json::to_value(ChatCompletionRequest::new("m", &request)).unwrap();
        assert_eq!(body["tool_choice"], "required");
        assert_eq!(body["temperature"], 0.0);
        assert_eq!(body["seed"], 7);
        assert_eq!(body["parallel_tool_calls"], false);
        assert_eq!(body["repeat_penalty"], 1.1);
        let plain = ModelRequest {
            messages: vec![ChatMessage::user("hi")],
            ..ModelRequest::default()
        };
        let body = serde_json::to_value(ChatCompletionRequest::new("m", &plain)).unwrap();
        for field in ["tool_choice", "temperature", "seed", "parallel_tool_calls"] {
            assert!(body.get(field).is_none(), "{field} sent: {body}");
        }
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
