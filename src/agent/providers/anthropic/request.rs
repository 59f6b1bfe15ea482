//! The request body of `POST /v1/messages`, named as in Anthropic's API reference, and its
//! construction from a [`ModelRequest`].
//!
//! The Messages API wants strictly alternating `user` / `assistant` turns, tool results as
//! `tool_result` blocks of a user message, and no empty text blocks; the conversion takes care
//! of all three, merging neighbours of the same role into one message.
//!
//! Anthropic caches a prompt prefix only up to a `cache_control` breakpoint, so haico sets
//! two: on the instructions (which cover the tool list, rendered before them) and on the last
//! block of the conversation. The workspace snapshot comes after both, as the last user
//! block, so only it and what the turn added since the previous call are read anew.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::agent::model::{ChatMessage, ModelRequest, ToolCallRequest, ToolChoice, ToolDefinition};

/// `max_tokens` when the caller sets none (the API requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// `MessageCreateParams`, streaming.
#[derive(Debug, Serialize)]
pub struct MessageCreateParams {
    pub model: String,
    pub max_tokens: u32,
    /// The instructions, as one text block marked for caching.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub system: Vec<TextBlockParam>,
    pub messages: Vec<MessageParam>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolParam>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoiceParam>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    pub stream: bool,
    /// The server's own options (`HAICO_LLM_EXTRA_BODY`); the configuration refuses keys this
    /// struct sends itself.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The fields [`MessageCreateParams`] sends itself, which `HAICO_LLM_EXTRA_BODY` may not set.
pub const OWN_FIELDS: &[&str] = &[
    "model",
    "max_tokens",
    "system",
    "messages",
    "tools",
    "tool_choice",
    "temperature",
    "stream",
];

/// `tool_choice`: `auto`, `any` (some tool must be called) or `none`; parallel calls are
/// turned off here, the Messages API has no separate field for it.
#[derive(Debug, Serialize)]
pub struct ToolChoiceParam {
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disable_parallel_tool_use: Option<bool>,
}

impl ToolChoiceParam {
    /// The choice for `request`, or nothing when it asks for the API's defaults. The Messages
    /// API has no seed: `HAICO_LLM_SEED` is not sent to it.
    fn of(request: &ModelRequest) -> Option<Self> {
        if request.tools.is_empty() {
            return None;
        }
        let kind = match request.tool_choice {
            ToolChoice::Auto => "auto",
            ToolChoice::Required => "any",
            ToolChoice::None => "none",
        };
        let disable_parallel_tool_use = match request.sampling.parallel_tool_calls {
            Some(false) if kind != "none" => Some(true),
            _ => None,
        };
        (kind != "auto" || disable_parallel_tool_use.is_some()).then_some(Self {
            kind,
            disable_parallel_tool_use,
        })
    }
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

/// A cache breakpoint: the prompt up to and including the block carrying it may be cached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CacheControl {
    #[serde(rename = "type")]
    pub kind: CacheKind,
}

/// The only kind of cache the API offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheKind {
    Ephemeral,
}

const BREAKPOINT: Option<CacheControl> = Some(CacheControl {
    kind: CacheKind::Ephemeral,
});

/// `TextBlockParam` of the system prompt.
#[derive(Debug, Serialize)]
pub struct TextBlockParam {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

/// The content blocks haico sends, tagged by `type`.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlockParam {
    Text {
        text: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: String,
        content: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
}

impl ContentBlockParam {
    /// Puts a cache breakpoint on this block.
    fn mark_for_cache(&mut self) {
        match self {
            Self::Text { cache_control, .. }
            | Self::ToolUse { cache_control, .. }
            | Self::ToolResult { cache_control, .. } => *cache_control = BREAKPOINT,
        }
    }
}

/// `ToolParam`: a tool the model may call.
#[derive(Debug, Serialize)]
pub struct ToolParam {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

impl MessageCreateParams {
    /// The streaming request for `model`, with the cache breakpoints and the snapshot last.
    pub fn new(model: &str, request: &ModelRequest) -> Self {
        let mut messages = messages(&request.messages);
        if let Some(last) = messages
            .last_mut()
            .and_then(|message| message.content.last_mut())
        {
            last.mark_for_cache();
        }
        if !request.snapshot.is_empty() {
            let block = ContentBlockParam::Text {
                text: request.snapshot.clone(),
                cache_control: None,
            };
            match messages.last_mut() {
                Some(last) if last.role == Role::User => last.content.push(block),
                _ => messages.push(MessageParam {
                    role: Role::User,
                    content: vec![block],
                }),
            }
        }
        let system = (!request.system.is_empty()).then(|| TextBlockParam {
            kind: "text",
            text: request.system.clone(),
            cache_control: BREAKPOINT,
        });
        Self {
            model: model.to_string(),
            max_tokens: request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            system: system.into_iter().collect(),
            messages,
            tools: request.tools.iter().map(ToolParam::from).collect(),
            tool_choice: ToolChoiceParam::of(request),
            temperature: request.sampling.temperature,
            stream: true,
            extra: request.sampling.extra.clone(),
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
                    cache_control: None,
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
            cache_control: None,
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
            cache_control: None,
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
    fn tool_choice_and_temperature_follow_the_request() {
        let request = ModelRequest {
            messages: vec![ChatMessage::user("hi")],
            tools: vec![ToolDefinition {
                name: "t".into(),
                description: "d".into(),
                parameters: json!({"type": "object"}),
            }],
            tool_choice: ToolChoice::Required,
            sampling: crate::agent::model::Sampling {
                temperature: Some(0.2),
                seed: Some(3),
                parallel_tool_calls: Some(false),
                ..Default::default()
            },
            ..ModelRequest::default()
        };
        let body = serde_json::to_value(MessageCreateParams::new("claude", &request)).unwrap();
        assert_eq!(
            body["tool_choice"],
            json!({"type": "any", "disable_parallel_tool_use": true})
        );
        assert!((body["temperature"].as_f64().unwrap() - 0.2).abs() < 1e-6);
        assert!(body.get("seed").is_none());
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
        assert_eq!(
            body["system"],
            json!([{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}])
        );
        assert!(body.get("tools").is_none());
        assert!(body.get("tool_choice").is_none());
        assert!(body.get("temperature").is_none());
    }

    #[test]
    fn the_snapshot_is_the_last_user_block_after_the_conversations_breakpoint() {
        let request = ModelRequest {
            system: "sys".into(),
            messages: vec![
                ChatMessage::user("tick it"),
                ChatMessage::assistant("", vec![call("t1", r#"{"indices":[1]}"#)]),
                ChatMessage::tool("t1", "toggle_todos", "ok"),
            ],
            snapshot: "<plan>…</plan>".into(),
            ..ModelRequest::default()
        };
        let body = serde_json::to_value(MessageCreateParams::new("claude", &request)).unwrap();
        assert_eq!(
            body["messages"][2],
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "ok",
                 "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": "<plan>…</plan>"}
            ]})
        );
        assert_eq!(body["messages"].as_array().map(Vec::len), Some(3));
    }
}
