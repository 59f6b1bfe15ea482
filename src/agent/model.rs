//! The provider-neutral face of a language model: the conversation the agent sends, the events
//! a streamed answer is made of, the [`ChatModel`] trait every provider implements, and the
//! [`ProviderError`] a call can end with.
//!
//! The agent loop only ever sees these types; each provider converts them to and from its own
//! wire format, so adding a provider never touches the loop.

use std::{path::PathBuf, pin::Pin, time::Duration};

use async_trait::async_trait;
use futures::{Stream, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use haico_store::usage::CallUsage;

/// One message of the conversation, in the order the model should read them. The system prompt
/// is not a message: it travels in [`ModelRequest::system`], because providers place it
/// differently.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum ChatMessage {
    /// What the person wrote.
    User { content: String },
    /// What the model answered: text, tool calls, or both.
    Assistant {
        content: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCallRequest>,
    },
    /// The result of one tool call, fed back to the model under the call's id.
    Tool {
        call_id: String,
        name: String,
        /// The result envelope as a JSON string.
        content: String,
    },
}

impl ChatMessage {
    /// A message from the person.
    pub fn user(content: impl Into<String>) -> Self {
        Self::User {
            content: content.into(),
        }
    }

    /// An answer of the model, as it is replayed in later requests.
    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCallRequest>) -> Self {
        Self::Assistant {
            content: content.into(),
            tool_calls,
        }
    }

    /// The envelope of one tool call, answering the call with id `call_id`.
    pub fn tool(
        call_id: impl Into<String>,
        name: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        Self::Tool {
            call_id: call_id.into(),
            name: name.into(),
            content: content.into(),
        }
    }
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallRequest {
    /// The provider's id for the call; the result must carry it back.
    pub id: String,
    /// The tool's name, as the model wrote it (it may name no tool at all).
    pub name: String,
    /// The arguments exactly as the model produced them. This is raw text and may not be valid
    /// JSON: the agent loop turns a parse failure into a failure envelope the model can read,
    /// so providers never reject a stream because of it.
    pub arguments: String,
}

/// A tool as the model is told about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    /// The JSON Schema of the tool's arguments.
    pub parameters: Value,
}

/// Everything one model call needs, laid out so providers' prompt caches keep all but its end:
/// `system` and `tools` (the head) are the same in every request of a configuration,
/// `messages` only ever grow within a turn, and `snapshot`, the one part rebuilt before every
/// call, goes last.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelRequest {
    /// The instructions: byte-identical in every request (the workspace is in `snapshot`).
    pub system: String,
    pub messages: Vec<ChatMessage>,
    /// The workspace as it stands now, sent after the conversation; empty sends nothing.
    pub snapshot: String,
    /// Which role carries `snapshot` on the OpenAI-compatible wire.
    pub snapshot_role: SnapshotRole,
    pub tools: Vec<ToolDefinition>,
    /// Upper bound on the answer's length; `None` lets the provider choose (Anthropic, which
    /// requires one, then uses its own default).
    pub max_tokens: Option<u32>,
    /// Whether the model may, must or must not call a tool in this answer. Only the agent's
    /// second ask after a first answer that did nothing sets it ([`ToolChoice::Required`]);
    /// everything else leaves it to the model.
    pub tool_choice: ToolChoice,
    /// How the model samples its answer, as the person configured it.
    pub sampling: Sampling,
}

/// `tool_choice` of a request. `Auto` is every provider's default and is not sent, so a
/// request that does not ask for more reads exactly as before.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// The model must call at least one tool (llama.cpp turns this into a grammar).
    Required,
    /// The model must answer in text.
    None,
}

/// Sampling settings sent with every request (`HAICO_LLM_TEMPERATURE`, `HAICO_LLM_SEED`,
/// `HAICO_LLM_PARALLEL_TOOL_CALLS`, `HAICO_LLM_EXTRA_BODY`). Unset fields are not sent, so the
/// server's own defaults apply: llama.cpp samples at temperature 0.8 unless told otherwise,
/// which makes one run of a small model say little.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sampling {
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Seed of the server's sampler, for repeatable answers where the server honours it.
    pub seed: Option<u64>,
    /// Whether one answer may hold several tool calls; `None` leaves it to the server (which
    /// knows what its chat template supports).
    pub parallel_tool_calls: Option<bool>,
    /// Further fields of the request body, passed to the server as they are (e.g. llama.cpp's
    /// `repeat_penalty`, `top_k`): a server's own options without a code change.
    pub extra: serde_json::Map<String, Value>,
}

/// The role of the late message that carries the workspace snapshot on the OpenAI-compatible
/// wire (`HAICO_LLM_SNAPSHOT_ROLE`). `system` says best that it is context, not something the
/// person said; some chat templates refuse a system message after the first, and need `user`.
/// Anthropic's API has no late system message: there it is always the last user block.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum SnapshotRole {
    /// A `system` message.
    #[default]
    System,
    /// A `user` message.
    User,
}

impl std::str::FromStr for SnapshotRole {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name.trim().to_ascii_lowercase().as_str() {
            "system" => Ok(Self::System),
            "user" => Ok(Self::User),
            other => Err(format!(
                "`{other}` is not a snapshot role: use system or user"
            )),
        }
    }
}

/// One piece of a streamed answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelEvent {
    /// More answer text, to be shown as it arrives.
    TextDelta(String),
    /// A complete tool call. Emitted once its arguments are complete, in the order the model
    /// produced the calls; one answer may hold several.
    ToolCall(ToolCallRequest),
    /// Token counts of the call, when the provider reports them (the agent adds the timings).
    Usage(CallUsage),
    /// The answer is complete; the provider's own stop reason (`stop`, `tool_calls`,
    /// `end_turn`, `tool_use`, `max_tokens`…) when it gave one. Always the last event.
    Finished { stop_reason: Option<String> },
}

/// A streamed answer. It ends after [`ModelEvent::Finished`] or after the first error.
/// Dropping it closes the underlying connection, which is how a turn is cancelled.
pub type ModelStream = Pin<Box<dyn Stream<Item = Result<ModelEvent, ProviderError>> + Send>>;

/// A language model the agent can talk to.
///
/// Cancellation is by dropping: dropping the future returned by [`ChatModel::stream`] (during
/// connection, retries or back-off) or the [`ModelStream`] it produced aborts the HTTP request.
#[async_trait]
pub trait ChatModel: Send + Sync {
    /// A one-line description for logs and error messages (provider, model, endpoint; never a
    /// key).
    fn describe(&self) -> String;

    /// Whether this is a real model. Only the stand-in for a missing configuration
    /// ([`UnconfiguredModel`](crate::agent::providers::UnconfiguredModel)) says no; wrappers
    /// pass the question on.
    fn is_configured(&self) -> bool {
        true
    }

    /// Who serves the model, as trace spans name it (`gen_ai.provider.name`: `openai`,
    /// `anthropic`…); wrappers pass the question on.
    fn provider_name(&self) -> &'static str {
        "unknown"
    }

    /// The model asked for (`gen_ai.request.model`); empty when there is none.
    fn model_name(&self) -> &str {
        ""
    }

    /// Starts one call. Transient failures before the answer starts streaming are retried
    /// inside; once events flow, a failure is an error item of the stream, never a retry
    /// (events already shown cannot be taken back).
    async fn stream(&self, request: &ModelRequest) -> Result<ModelStream, ProviderError>;
}

/// A whole answer gathered from a [`ModelStream`]; handy when streaming does not matter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelResponse {
    pub text: String,
    pub tool_calls: Vec<ToolCallRequest>,
    /// The token counts, when reported.
    pub usage: Option<CallUsage>,
    pub stop_reason: Option<String>,
}

impl ModelResponse {
    /// Reads a stream to its end; the first error ends the read.
    pub async fn collect(mut stream: ModelStream) -> Result<Self, ProviderError> {
        let mut response = Self::default();
        while let Some(event) = stream.next().await {
            match event? {
                ModelEvent::TextDelta(text) => response.text.push_str(&text),
                ModelEvent::ToolCall(call) => response.tool_calls.push(call),
                ModelEvent::Usage(usage) => response.usage = Some(usage),
                ModelEvent::Finished { stop_reason } => response.stop_reason = stop_reason,
            }
        }
        Ok(response)
    }
}

/// How to tell a user to configure a model; appended to every "not configured" message.
pub const CONFIGURE_HINT: &str = "set HAICO_LLM_PROVIDER (openai, anthropic or replay), \
HAICO_LLM_MODEL, and as the provider needs HAICO_LLM_BASE_URL and HAICO_LLM_API_KEY (or \
OPENAI_API_KEY / ANTHROPIC_API_KEY); e.g. HAICO_LLM_PROVIDER=openai \
HAICO_LLM_BASE_URL=http://localhost:11434/v1 HAICO_LLM_MODEL=llama3.1 for a local Ollama";

/// What to check when the model's server cannot be reached; appended to those errors.
pub const REACH_HINT: &str = "check HAICO_LLM_BASE_URL (is the model server running and \
listening there?), HAICO_LLM_PROVIDER and HAICO_LLM_MODEL";

/// Why a model call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    /// No usable model is configured; the text says what is missing.
    #[error("no language model is configured ({0}): {CONFIGURE_HINT}")]
    NotConfigured(String),
    /// `HAICO_LLM_PROVIDER` names a provider haico does not know.
    #[error("unknown LLM provider `{0}`: expected openai, anthropic or replay")]
    UnknownProvider(String),
    /// A setting is present but unusable (a base URL that is not http(s), a client that
    /// cannot be built).
    #[error("invalid LLM configuration: {0}")]
    InvalidConfig(String),
    /// The endpoint could not be reached (DNS, refused or reset connection, TLS failure); the
    /// text names the URL and the settings that decide it.
    #[error("cannot reach the language model at {url}: {reason}; {REACH_HINT}")]
    Unreachable {
        url: String,
        reason: String,
        /// Nothing listens there (connection refused): retried at most once, since a port
        /// that is shut rarely opens within the seconds a person waits for an answer.
        refused: bool,
    },
    /// No answer in time: `waiting_for` says whether the first byte or the next chunk was late.
    #[error("the language model did not answer within {after:?} (waiting for {waiting_for})")]
    Timeout {
        after: Duration,
        waiting_for: &'static str,
    },
    /// HTTP 429, still after the retries, or with a `Retry-After` longer than haico waits.
    #[error("the language model provider is rate limiting haico (HTTP 429{}): {body}",
        retry_after.map(|d| format!(", retry after {d:?}")).unwrap_or_default())]
    RateLimited {
        retry_after: Option<Duration>,
        body: String,
    },
    /// Any other non-success HTTP status; `body` is an excerpt of the provider's answer.
    #[error("the language model provider answered HTTP {code}: {body}")]
    Status { code: u16, body: String },
    /// The answer stopped before its end (connection closed or reset mid-stream).
    #[error("the language model's answer was cut off: {0}")]
    StreamCut(String),
    /// The answer could not be understood (malformed SSE data or JSON).
    #[error("the language model's answer could not be understood: {0}")]
    Protocol(String),
    /// The provider reported an error inside the stream (e.g. Anthropic's `overloaded_error`).
    #[error("the language model provider reported an error ({kind}): {message}")]
    Api { kind: String, message: String },
    /// The request could not be built or sent for a reason that is not the network's.
    #[error("could not send the request to the language model: {0}")]
    Request(String),
    /// The replay script could not be read or is invalid; the text says where.
    #[error("replay script {}: {message}", path.display())]
    ReplayScript { path: PathBuf, message: String },
    /// Every response of the replay script has been played.
    #[error("the replay script {} has no response left (all {used} were played)", path.display())]
    ReplayExhausted { path: PathBuf, used: usize },
}

impl ProviderError {
    /// A short, fixed name of the error's kind, for metrics labels.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::NotConfigured(_) => "not_configured",
            Self::UnknownProvider(_) => "unknown_provider",
            Self::InvalidConfig(_) => "invalid_config",
            Self::Unreachable { .. } => "unreachable",
            Self::Timeout { .. } => "timeout",
            Self::RateLimited { .. } => "rate_limited",
            Self::Status { .. } => "status",
            Self::StreamCut(_) => "stream_cut",
            Self::Protocol(_) => "protocol",
            Self::Api { .. } => "api",
            Self::Request(_) => "request",
            Self::ReplayScript { .. } => "replay_script",
            Self::ReplayExhausted { .. } => "replay_exhausted",
        }
    }

    /// Whether trying again later may succeed (network trouble, timeouts, rate limits, server
    /// errors, overload). The HTTP layer retries these before an answer starts streaming.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Unreachable { .. }
            | Self::Timeout { .. }
            | Self::RateLimited { .. }
            | Self::StreamCut(_) => true,
            Self::Status { code, .. } => *code == 408 || *code >= 500,
            Self::Api { kind, .. } => matches!(
                kind.as_str(),
                "overloaded_error" | "api_error" | "rate_limit_error" | "server_error"
            ),
            Self::NotConfigured(_)
            | Self::UnknownProvider(_)
            | Self::InvalidConfig(_)
            | Self::Protocol(_)
            | Self::Request(_)
            | Self::ReplayScript { .. }
            | Self::ReplayExhausted { .. } => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transient_errors_are_the_retryable_ones() {
        assert!(
            ProviderError::Status {
                code: 503,
                body: String::new()
            }
            .is_transient()
        );
        assert!(
            !ProviderError::Status {
                code: 401,
                body: String::new()
            }
            .is_transient()
        );
        assert!(ProviderError::StreamCut("reset".into()).is_transient());
        assert!(!ProviderError::Protocol("bad json".into()).is_transient());
        assert!(!ProviderError::NotConfigured("x".into()).is_transient());
    }

    #[test]
    fn not_configured_tells_how_to_configure() {
        let text = ProviderError::NotConfigured("no provider is set".into()).to_string();
        for var in [
            "HAICO_LLM_PROVIDER",
            "HAICO_LLM_BASE_URL",
            "HAICO_LLM_MODEL",
            "HAICO_LLM_API_KEY",
        ] {
            assert!(text.contains(var), "{text}");
        }
    }

    #[test]
    fn messages_serialize_with_a_role_tag() {
        let json = serde_json::to_value(ChatMessage::user("hi")).unwrap_or_default();
        assert_eq!(json, serde_json::json!({"role": "user", "content": "hi"}));
    }
}
