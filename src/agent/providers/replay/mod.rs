//! The `replay` provider: plays a JSON script of model answers, one per call, for tests and
//! demos that must not depend on a real model. The format is described in [`script`].
//!
//! Responses are consumed in order by every call of the model, whatever the thread; once all
//! are played, calls fail with [`ProviderError::ReplayExhausted`]. Tool call ids are
//! `call_1`, `call_2`… across the whole script.

mod script;

use std::{
    path::{Path, PathBuf},
    sync::atomic::{AtomicUsize, Ordering},
    time::Duration,
};

use async_trait::async_trait;
use futures::StreamExt;

pub use script::{ReplayArguments, ReplayResponse, ReplayScript, ReplayToolCall, ReplayUsage};

use crate::{
    agent::model::ChatModel, agent::model::ModelEvent, agent::model::ModelRequest,
    agent::model::ModelStream, agent::model::ProviderError, agent::model::ToolCallRequest,
};

use haico_store::usage::CallUsage;

/// A model that answers from a script.
#[derive(Debug)]
pub struct ReplayModel {
    path: PathBuf,
    script: ReplayScript,
    next_response: AtomicUsize,
    next_call_id: AtomicUsize,
}

impl ReplayModel {
    /// Loads and validates the script at `path`.
    pub fn load(path: &Path) -> Result<Self, ProviderError> {
        Ok(Self::new(path, ReplayScript::load(path)?))
    }

    /// Plays `script`; `path` only names it in messages.
    pub fn new(path: &Path, script: ReplayScript) -> Self {
        Self {
            path: path.to_path_buf(),
            script,
            next_response: AtomicUsize::new(0),
            next_call_id: AtomicUsize::new(1),
        }
    }

    /// How many responses have been played.
    pub fn played(&self) -> usize {
        self.next_response
            .load(Ordering::SeqCst)
            .min(self.script.responses.len())
    }

    fn events(&self, response: &ReplayResponse) -> Vec<Result<ModelEvent, ProviderError>> {
        let mut events: Vec<Result<ModelEvent, ProviderError>> = response
            .text
            .split_inclusive(char::is_whitespace)
            .map(|word| Ok(ModelEvent::TextDelta(word.to_string())))
            .collect();
        if let Some(message) = &response.error {
            events.push(Err(ProviderError::StreamCut(message.clone())));
            return events;
        }
        for call in &response.tool_calls {
            let id = self.next_call_id.fetch_add(1, Ordering::SeqCst);
            events.push(Ok(ModelEvent::ToolCall(ToolCallRequest {
                id: format!("call_{id}"),
                name: call.name.clone(),
                arguments: call.arguments.to_text(),
            })));
        }
        if let Some(usage) = response.usage {
            events.push(Ok(ModelEvent::Usage(CallUsage {
                prompt_tokens: usage.prompt_tokens,
                cached_tokens: usage.cached_tokens,
                completion_tokens: usage.completion_tokens,
                ..CallUsage::default()
            })));
        }
        let stop_reason = if response.tool_calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        events.push(Ok(ModelEvent::Finished {
            stop_reason: Some(stop_reason.into()),
        }));
        events
    }
}

#[async_trait]
impl ChatModel for ReplayModel {
    fn describe(&self) -> String {
        format!(
            "replay of {} ({} responses)",
            self.path.display(),
            self.script.responses.len()
        )
    }

    fn provider_name(&self) -> &'static str {
        "replay"
    }

    async fn stream(&self, _request: &ModelRequest) -> Result<ModelStream, ProviderError> {
        let index = self.next_response.fetch_add(1, Ordering::SeqCst);
        let response =
            self.script
                .responses
                .get(index)
                .ok_or_else(|| ProviderError::ReplayExhausted {
                    path: self.path.clone(),
                    used: self.script.responses.len(),
                })?;
        let delay = Duration::from_millis(response.delay_ms);
        let events = self.events(response);
        Ok(futures::stream::once(async move {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            futures::stream::iter(events)
        })
        .flatten()
        .boxed())
    }
}
