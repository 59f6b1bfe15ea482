//! Which model to use, read from `HAICO_LLM_*` variables and matching flags.
//!
//! The provider is the one named by `HAICO_LLM_PROVIDER`; without it, haico picks `replay` when
//! a replay file is given, `openai` when a base URL or an OpenAI key is present, `anthropic`
//! when only an Anthropic key is, and otherwise runs without a model.

use std::{fmt, path::PathBuf, str::FromStr, time::Duration};

use clap::Args;

use crate::agent::{
    AgentConfig,
    aids::Aids,
    model::{ProviderError, Sampling, SnapshotRole},
    text_calls::TextToolCalls,
};

/// The supported providers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    /// Any OpenAI-compatible Chat Completions endpoint.
    Openai,
    /// Anthropic's Messages API.
    Anthropic,
    /// A scripted conversation from a JSON file.
    Replay,
}

impl FromStr for ProviderKind {
    type Err = ProviderError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name.trim().to_ascii_lowercase().as_str() {
            "openai" => Ok(Self::Openai),
            "anthropic" => Ok(Self::Anthropic),
            "replay" => Ok(Self::Replay),
            _ => Err(ProviderError::UnknownProvider(name.to_string())),
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Openai => "openai",
            Self::Anthropic => "anthropic",
            Self::Replay => "replay",
        })
    }
}

/// Everything needed to build a model; [`super::build_model`] turns it into one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderConfig {
    /// `None`: no provider configured; calls fail with [`ProviderError::NotConfigured`].
    pub kind: Option<ProviderKind>,
    /// The endpoint; each provider has its public API as default.
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub api_key: Option<String>,
    /// Budget of one attempt (connect, response head, first event), and the longest silence
    /// tolerated between two chunks of an answer.
    pub timeout: Duration,
    /// Retries of transient failures before an answer starts.
    pub max_retries: u32,
    /// First retry back-off; it doubles per retry (a 429's `Retry-After` takes precedence).
    pub retry_backoff: Duration,
    /// The script the `replay` provider plays.
    pub replay_script: Option<PathBuf>,
}

/// Default of `HAICO_LLM_TIMEOUT_SECS`.
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;
/// Default of `HAICO_LLM_MAX_RETRIES`.
pub const DEFAULT_MAX_RETRIES: u32 = 3;
/// Default of `HAICO_LLM_MAX_TOKENS`: room for a long document section, well short of
/// what a runaway answer would fill.
pub const DEFAULT_MAX_ANSWER_TOKENS: u32 = 4096;
/// Default first back-off.
pub const DEFAULT_RETRY_BACKOFF: Duration = Duration::from_millis(500);

impl Default for ProviderConfig {
    fn default() -> Self {
        Self {
            kind: None,
            base_url: None,
            model: None,
            api_key: None,
            timeout: Duration::from_secs(DEFAULT_TIMEOUT_SECS),
            max_retries: DEFAULT_MAX_RETRIES,
            retry_backoff: DEFAULT_RETRY_BACKOFF,
            replay_script: None,
        }
    }
}

/// The LLM flags, each also read from its environment variable.
#[derive(Debug, Clone, Args)]
pub struct LlmArgs {
    /// LLM provider: openai (any OpenAI-compatible server), anthropic or replay.
    #[arg(long, env = "HAICO_LLM_PROVIDER", value_parser = ProviderKind::from_str)]
    pub llm_provider: Option<ProviderKind>,
    /// Endpoint of the provider, e.g. http://localhost:11434/v1 for Ollama.
    #[arg(long, env = "HAICO_LLM_BASE_URL")]
    pub llm_base_url: Option<String>,
    /// Model name, e.g. gpt-4o-mini, llama3.1, claude-sonnet-4-5.
    #[arg(long, env = "HAICO_LLM_MODEL")]
    pub llm_model: Option<String>,
    /// API key (falls back to OPENAI_API_KEY or ANTHROPIC_API_KEY by provider).
    #[arg(long, env = "HAICO_LLM_API_KEY", hide_env_values = true)]
    pub llm_api_key: Option<String>,
    /// OpenAI key, used when HAICO_LLM_API_KEY is not set.
    #[arg(long, env = "OPENAI_API_KEY", hide_env_values = true, hide = true)]
    pub openai_api_key: Option<String>,
    /// Anthropic key, used when HAICO_LLM_API_KEY is not set.
    #[arg(long, env = "ANTHROPIC_API_KEY", hide_env_values = true, hide = true)]
    pub anthropic_api_key: Option<String>,
    /// Seconds to wait for a model to start answering, and between chunks of its answer.
    #[arg(long, env = "HAICO_LLM_TIMEOUT_SECS", default_value_t = DEFAULT_TIMEOUT_SECS,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub llm_timeout_secs: u64,
    /// Retries of transient provider failures (timeouts, 429, 5xx) before an answer starts.
    #[arg(long, env = "HAICO_LLM_MAX_RETRIES", default_value_t = DEFAULT_MAX_RETRIES)]
    pub llm_max_retries: u32,
    /// JSON script played by the replay provider.
    #[arg(long, env = "HAICO_LLM_REPLAY_FILE")]
    pub llm_replay_file: Option<PathBuf>,
    /// Role of the last message, the one carrying the workspace snapshot, on the
    /// OpenAI-compatible wire: system, or user for chat templates that refuse a system
    /// message after the first.
    #[arg(long, env = "HAICO_LLM_SNAPSHOT_ROLE", default_value = "system",
          value_parser = SnapshotRole::from_str)]
    pub llm_snapshot_role: SnapshotRole,
    /// Whether an answer that is only tool calls written as text (a ```json block or
    /// <tool_call> tags naming an offered tool) is taken as those calls: auto or off.
    #[arg(long, env = "HAICO_LLM_TEXT_TOOL_CALLS", default_value = "auto",
          value_parser = TextToolCalls::from_str)]
    pub llm_text_tool_calls: TextToolCalls,
    /// Longest answer, in tokens, the model may write per call. Bounds a call's time: a
    /// small local model that starts repeating itself would otherwise write until its
    /// context is full, which takes many minutes on a CPU.
    #[arg(long, env = "HAICO_LLM_MAX_TOKENS", default_value_t = DEFAULT_MAX_ANSWER_TOKENS,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub llm_max_tokens: u32,
    /// Sampling temperature sent with every request (0 to 2); unset leaves the server's own
    /// (llama.cpp's is 0.8).
    #[arg(long, env = "HAICO_LLM_TEMPERATURE", value_parser = parse_temperature)]
    pub llm_temperature: Option<f32>,
    /// Seed of the server's sampler, for repeatable answers where the server honours it
    /// (OpenAI-compatible servers; Anthropic has none).
    #[arg(long, env = "HAICO_LLM_SEED")]
    pub llm_seed: Option<u64>,
    /// Whether one answer may hold several tool calls: auto (the server's default, which
    /// knows its chat template), on or off.
    #[arg(long, env = "HAICO_LLM_PARALLEL_TOOL_CALLS", default_value = "auto",
          value_parser = parse_switch)]
    pub llm_parallel_tool_calls: Switch,
    /// A JSON object of further request fields sent as they are, for a server's own options,
    /// e.g. '{"repeat_penalty": 1.1, "top_k": 20}' for llama.cpp.
    #[arg(long, env = "HAICO_LLM_EXTRA_BODY", value_parser = parse_extra_body)]
    pub llm_extra_body: Option<ExtraBody>,
    /// Help for small models: none, all, or some of compact-tools, examples, ask-to-act,
    /// turn-notes, history-calls (a leading - takes one away: all,-examples).
    #[arg(long, env = "HAICO_LLM_AIDS", default_value = "none", value_parser = Aids::from_str)]
    pub llm_aids: Aids,
}

/// `auto`, `on` or `off`: a setting that may also be left to the other side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Switch(pub Option<bool>);

fn parse_switch(text: &str) -> Result<Switch, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "auto" => Ok(Switch(None)),
        "on" | "true" | "1" => Ok(Switch(Some(true))),
        "off" | "false" | "0" => Ok(Switch(Some(false))),
        other => Err(format!("`{other}` is not auto, on or off")),
    }
}

fn parse_temperature(text: &str) -> Result<f32, String> {
    let value: f32 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number: give a temperature from 0 to 2"))?;
    if (0.0..=2.0).contains(&value) {
        Ok(value)
    } else {
        Err(format!(
            "{value} is out of range: give a temperature from 0 to 2"
        ))
    }
}

/// The fields of `HAICO_LLM_EXTRA_BODY`.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtraBody(pub serde_json::Map<String, serde_json::Value>);

/// A JSON object whose keys are none that haico sends itself (so none is sent twice); the
/// error names the setting that sets such a key.
fn parse_extra_body(text: &str) -> Result<ExtraBody, String> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|err| format!("not JSON ({err}); give one object, e.g. '{{\"top_k\": 20}}'"))?;
    let serde_json::Value::Object(fields) = value else {
        return Err("give one JSON object, e.g. '{\"top_k\": 20}'".into());
    };
    let own = super::openai::OWN_FIELDS
        .iter()
        .chain(super::anthropic::OWN_FIELDS);
    for field in own {
        if fields.contains_key(*field) {
            let instead = match *field {
                "temperature" => "HAICO_LLM_TEMPERATURE",
                "seed" => "HAICO_LLM_SEED",
                "max_tokens" => "HAICO_LLM_MAX_TOKENS",
                "parallel_tool_calls" => "HAICO_LLM_PARALLEL_TOOL_CALLS",
                "model" => "HAICO_LLM_MODEL",
                _ => "",
            };
            return Err(if instead.is_empty() {
                format!("`{field}` is a field haico sets itself; leave it out")
            } else {
                format!("`{field}` is set with {instead}; leave it out of the extra body")
            });
        }
    }
    Ok(ExtraBody(fields))
}

/// An empty variable counts as unset.
fn present(value: &Option<String>) -> Option<String> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

impl LlmArgs {
    /// `config` with the prompt settings these flags describe.
    pub fn agent_config(&self, config: AgentConfig) -> AgentConfig {
        AgentConfig {
            snapshot_role: self.llm_snapshot_role,
            text_tool_calls: self.llm_text_tool_calls,
            max_tokens: Some(self.llm_max_tokens),
            sampling: Sampling {
                temperature: self.llm_temperature,
                seed: self.llm_seed,
                parallel_tool_calls: self.llm_parallel_tool_calls.0,
                extra: self
                    .llm_extra_body
                    .as_ref()
                    .map(|extra| extra.0.clone())
                    .unwrap_or_default(),
            },
            aids: self.llm_aids,
            ..config
        }
    }

    /// The configuration these flags describe.
    pub fn config(&self) -> ProviderConfig {
        let base_url = present(&self.llm_base_url);
        let own_key = present(&self.llm_api_key);
        let openai_key = present(&self.openai_api_key);
        let anthropic_key = present(&self.anthropic_api_key);
        let kind = self.llm_provider.or_else(|| {
            if self.llm_replay_file.is_some() {
                Some(ProviderKind::Replay)
            } else if base_url.is_some() || own_key.is_some() || openai_key.is_some() {
                Some(ProviderKind::Openai)
            } else if anthropic_key.is_some() {
                Some(ProviderKind::Anthropic)
            } else {
                None
            }
        });
        let api_key = own_key.or(match kind {
            Some(ProviderKind::Openai) => openai_key,
            Some(ProviderKind::Anthropic) => anthropic_key,
            _ => None,
        });
        ProviderConfig {
            kind,
            base_url,
            model: present(&self.llm_model),
            api_key,
            timeout: Duration::from_secs(self.llm_timeout_secs),
            max_retries: self.llm_max_retries,
            retry_backoff: DEFAULT_RETRY_BACKOFF,
            replay_script: self.llm_replay_file.clone(),
        }
    }
}
