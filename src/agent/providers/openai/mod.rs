//! OpenAI-compatible Chat Completions (`POST {base_url}/chat/completions`, streaming): OpenAI
//! itself, and Ollama, vLLM, llama.cpp's server, LM Studio, OpenRouter and the like, which
//! speak the same format. A key, when set, goes in a bearer header; local servers need none.

mod request;
mod streaming;

use async_trait::async_trait;

pub use request::{ChatCompletionRequest, OWN_FIELDS};
pub use streaming::{ChatCompletionChunk, ChunkDecoder};

use super::{
    http::{HttpPolicy, HttpTransport},
    sse::decode_stream,
};
use crate::agent::model::{ChatModel, ModelRequest, ModelStream, ProviderError};

/// Where OpenAI's own API lives.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// The model used against OpenAI's own API when none is configured.
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";

/// A model behind a Chat Completions endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiModel {
    transport: HttpTransport,
    base_url: String,
    model: String,
    api_key: Option<String>,
}

impl OpenAiModel {
    /// A model named `model` at `base_url` (the part before `/chat/completions`).
    pub fn new(
        base_url: &str,
        model: &str,
        api_key: Option<String>,
        policy: HttpPolicy,
    ) -> Result<Self, ProviderError> {
        Ok(Self {
            transport: HttpTransport::new("openai", policy)?,
            base_url: base_url.trim_end_matches('/').to_string(),
            model: model.to_string(),
            api_key,
        })
    }
}

#[async_trait]
impl ChatModel for OpenAiModel {
    fn describe(&self) -> String {
        format!(
            "OpenAI-compatible model `{}` at {}",
            self.model, self.base_url
        )
    }

    fn provider_name(&self) -> &'static str {
        "openai"
    }

    fn model_name(&self) -> &str {
        &self.model
    }

    async fn stream(&self, request: &ModelRequest) -> Result<ModelStream, ProviderError> {
        let url = format!("{}/chat/completions", self.base_url);
        let body = ChatCompletionRequest::new(&self.model, request);
        let events = self
            .transport
            .open_events(&url, || {
                let builder = self
                    .transport
                    .client()
                    .post(&url)
                    .header(reqwest::header::ACCEPT, "text/event-stream")
                    .json(&body);
                match &self.api_key {
                    Some(key) => builder.bearer_auth(key),
                    None => builder,
                }
            })
            .await?;
        Ok(decode_stream(events, ChunkDecoder::default()))
    }
}
