//! Anthropic's Messages API (`POST {base_url}/v1/messages`, streaming), authenticated with the
//! `x-api-key` header and pinned to API version `2023-06-01`.

mod request;
mod streaming;

use async_trait::async_trait;

pub use request::{DEFAULT_MAX_TOKENS, MessageCreateParams, OWN_FIELDS};
pub use streaming::{EventDecoder, RawMessageStreamEvent};

use super::{
    http::{HttpPolicy, HttpTransport},
    sse::decode_stream,
};
use crate::agent::model::{ChatModel, ModelRequest, ModelStream, ProviderError};

/// Where Anthropic's API lives.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// The model used when none is configured.
pub const DEFAULT_MODEL: &str = "claude-sonnet-4-5";

/// The API version haico speaks.
pub const API_VERSION: &str = "2023-06-01";

/// A Claude model behind the Messages API.
#[derive(Debug, Clone)]
pub struct AnthropicModel {
    transport: HttpTransport,
    base_url: String,
    model: String,
    api_key: Option<String>,
}

impl AnthropicModel {
    /// A model named `model` at `base_url` (the part before `/v1/messages`).
    pub fn new(
        base_url: &str,
        model: &str,
        api_key: Option<String>,
        policy: HttpPolicy,
    ) -> Result<Self, ProviderError> {
        Ok(Self {
            transport: HttpTransport::new("anthropic", policy)?,
            base_url: base_url.trim_end_matches('/').to_string(),
            model: model.to_string(),
            api_key,
        })
    }
}

#[async_trait]
impl ChatModel for AnthropicModel {
    fn describe(&self) -> String {
        format!("Anthropic model `{}` at {}", self.model, self.base_url)
    }

    fn provider_name(&self) -> &'static str {
        "anthropic"
    }

    fn model_name(&self) -> &str {
        &self.model
    }

    async fn stream(&self, request: &ModelRequest) -> Result<ModelStream, ProviderError> {
        let url = format!("{}/v1/messages", self.base_url);
        let body = MessageCreateParams::new(&self.model, request);
        let events = self
            .transport
            .open_events(&url, || {
                let builder = self
                    .transport
                    .client()
                    .post(&url)
                    .header("anthropic-version", API_VERSION)
                    .header(reqwest::header::ACCEPT, "text/event-stream")
                    .json(&body);
                match &self.api_key {
                    Some(key) => builder.header("x-api-key", key),
                    None => builder,
                }
            })
            .await?;
        Ok(decode_stream(events, EventDecoder::default()))
    }
}
