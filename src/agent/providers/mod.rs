//! The LLM providers behind [`ChatModel`]: OpenAI-compatible Chat Completions ([`openai`]),
//! Anthropic Messages ([`anthropic`]) and scripted replay ([`replay`]), plus what they share:
//! configuration ([`config`]), the HTTP transport with timeouts and retries ([`http`]) and
//! the SSE decoding plumbing ([`sse`]).
//!
//! [`build_model`] is the one entry point: it turns a [`ProviderConfig`] into a model, or into
//! an [`UnconfiguredModel`] when a required setting is missing, so the server still runs.

pub mod anthropic;
pub mod config;
pub mod http;
pub mod openai;
pub mod replay;
pub mod sse;
pub mod unconfigured;

use std::sync::Arc;

pub use config::{LlmArgs, ProviderConfig, ProviderKind};
pub use unconfigured::UnconfiguredModel;

use crate::agent::model::{ChatModel, ProviderError};
use anthropic::AnthropicModel;
use http::HttpPolicy;
use openai::OpenAiModel;
use replay::ReplayModel;

/// Builds the configured model.
///
/// Missing settings (no provider, no key for a hosted API, no model for a self-hosted server,
/// no replay file) give a model whose calls fail with [`ProviderError::NotConfigured`] saying
/// what to set. Unusable settings (a base URL that is not http(s), an invalid replay script)
/// are errors, to be reported at start-up.
pub fn build_model(config: &ProviderConfig) -> Result<Arc<dyn ChatModel>, ProviderError> {
    let Some(kind) = config.kind else {
        return Ok(Arc::new(UnconfiguredModel::new("no provider is set")));
    };
    let policy = HttpPolicy {
        timeout: config.timeout,
        idle_timeout: config.timeout,
        max_retries: config.max_retries,
        backoff: config.retry_backoff,
    };
    let key = config.api_key.clone();
    Ok(match kind {
        ProviderKind::Openai => match endpoint(config, &OPENAI)? {
            Endpoint::Ready { base_url, model } => {
                Arc::new(OpenAiModel::new(&base_url, &model, key, policy)?)
            }
            Endpoint::Missing(reason) => Arc::new(UnconfiguredModel::new(reason)),
        },
        ProviderKind::Anthropic => match endpoint(config, &ANTHROPIC)? {
            Endpoint::Ready { base_url, model } => {
                Arc::new(AnthropicModel::new(&base_url, &model, key, policy)?)
            }
            Endpoint::Missing(reason) => Arc::new(UnconfiguredModel::new(reason)),
        },
        ProviderKind::Replay => match &config.replay_script {
            Some(path) => Arc::new(ReplayModel::load(path)?),
            None => Arc::new(UnconfiguredModel::new(
                "the replay provider needs a script: set HAICO_LLM_REPLAY_FILE",
            )),
        },
    })
}

/// What an HTTP provider falls back on.
struct HostedApi {
    name: &'static str,
    base_url: &'static str,
    model: &'static str,
    key_variable: &'static str,
}

const OPENAI: HostedApi = HostedApi {
    name: "openai",
    base_url: openai::DEFAULT_BASE_URL,
    model: openai::DEFAULT_MODEL,
    key_variable: "OPENAI_API_KEY",
};

const ANTHROPIC: HostedApi = HostedApi {
    name: "anthropic",
    base_url: anthropic::DEFAULT_BASE_URL,
    model: anthropic::DEFAULT_MODEL,
    key_variable: "ANTHROPIC_API_KEY",
};

/// Where an HTTP provider sends its requests, or what is missing to know.
enum Endpoint {
    Ready { base_url: String, model: String },
    Missing(String),
}

/// The provider's hosted API needs a key; a self-hosted server (any other base URL) needs a
/// model name, since no default would fit it.
fn endpoint(config: &ProviderConfig, api: &HostedApi) -> Result<Endpoint, ProviderError> {
    let base_url = match &config.base_url {
        Some(url) if url.starts_with("http://") || url.starts_with("https://") => url.clone(),
        Some(url) => {
            return Err(ProviderError::InvalidConfig(format!(
                "HAICO_LLM_BASE_URL must start with http:// or https://, not `{url}`"
            )));
        }
        None => api.base_url.to_string(),
    };
    let hosted = base_url.trim_end_matches('/') == api.base_url;
    if hosted && config.api_key.is_none() {
        return Ok(Endpoint::Missing(format!(
            "the {} provider at {base_url} needs an API key: set HAICO_LLM_API_KEY or {}",
            api.name, api.key_variable
        )));
    }
    let model = match &config.model {
        Some(model) => model.clone(),
        None if hosted => api.model.to_string(),
        None => {
            return Ok(Endpoint::Missing(format!(
                "the {} provider at {base_url} needs a model name: set HAICO_LLM_MODEL",
                api.name
            )));
        }
    };
    Ok(Endpoint::Ready { base_url, model })
}
