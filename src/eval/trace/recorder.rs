//! A [`ChatModel`] wrapper that records every call of the model the evaluation uses: it
//! passes each streamed answer through unchanged and notes, on the way, when the first piece
//! came, the text, the tool calls, the token counts and the stop reason.

use std::{
    pin::Pin,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    task::{Context, Poll},
    time::Instant,
};

use async_trait::async_trait;
use futures::Stream;

use super::{ModelCallTrace, ToolCallTrace, cut};
use crate::{
    agent::model::ChatModel, agent::model::ModelEvent, agent::model::ModelRequest,
    agent::model::ModelStream, agent::model::ProviderError, agent::model::ToolCallRequest,
    agent::text_calls, agent::text_calls::TextToolCalls,
};
use haico_store::usage::CallUsage;

/// Longest text the trace keeps per model call (a runaway answer can fill the model's whole
/// answer budget).
const TEXT_CHARS: usize = 4_000;

/// One model call as it streamed.
#[derive(Debug, Clone)]
pub struct RecordedCall {
    /// The message (from 1) whose turn made the call.
    pub turn: usize,
    started: Instant,
    /// From the request to the end of the answer, in seconds.
    pub seconds: Option<f64>,
    /// From the request to the first text or tool call, in seconds.
    pub first_token_seconds: Option<f64>,
    /// The token counts the provider reported.
    pub usage: CallUsage,
    /// The text (cut once the call ended).
    pub text: String,
    /// The text's whole length in characters.
    pub text_chars: usize,
    /// The tool calls: the provider's, or those the text is written as.
    pub tool_calls: Vec<ToolCallRequest>,
    /// The tool calls were read from the text.
    pub written_as_text: bool,
    /// The provider's stop reason.
    pub stop_reason: Option<String>,
    /// Why the call failed, if it did.
    pub error: Option<String>,
    ended: bool,
}

impl RecordedCall {
    /// The call as the trace shows it, with its tool calls already joined.
    pub(super) fn trace(&self, call: usize, tool_calls: Vec<ToolCallTrace>) -> ModelCallTrace {
        ModelCallTrace {
            call,
            seconds: self.seconds,
            first_token_seconds: self.first_token_seconds,
            prompt_tokens: self.usage.prompt_tokens,
            cached_tokens: self.usage.cached_tokens,
            completion_tokens: self.usage.completion_tokens,
            text: self.text.clone(),
            text_chars: self.text_chars,
            written_as_text: self.written_as_text,
            tool_calls,
            stop_reason: self.stop_reason.clone(),
            error: self.error.clone(),
        }
    }
}

/// Every model call of one scenario run, in order, each marked with the turn it belongs to.
#[derive(Debug)]
pub struct CallLog {
    turn: AtomicUsize,
    calls: Mutex<Vec<RecordedCall>>,
    /// The tools a written call may name (the loop takes only those).
    offered: Vec<String>,
    text_calls: TextToolCalls,
}

impl CallLog {
    /// A log for a run whose agent offers `offered` and reads written calls per `text_calls`
    /// (as the loop does, so the trace joins the calls the loop took from text).
    pub fn new(offered: &[&str], text_calls: TextToolCalls) -> Arc<Self> {
        Arc::new(Self {
            turn: AtomicUsize::new(0),
            calls: Mutex::new(Vec::new()),
            offered: offered.iter().map(|name| (*name).to_string()).collect(),
            text_calls,
        })
    }

    /// Marks the calls from now on as made by the turn of message `turn`.
    pub fn set_turn(&self, turn: usize) {
        self.turn.store(turn, Ordering::SeqCst);
    }

    /// The calls recorded so far.
    pub fn calls(&self) -> Vec<RecordedCall> {
        self.calls
            .lock()
            .map(|calls| calls.clone())
            .unwrap_or_default()
    }

    /// Starts a call's record; its position in the log.
    fn begin(&self) -> Option<usize> {
        let mut calls = self.calls.lock().ok()?;
        calls.push(RecordedCall {
            turn: self.turn.load(Ordering::SeqCst),
            started: Instant::now(),
            seconds: None,
            first_token_seconds: None,
            usage: CallUsage::default(),
            text: String::new(),
            text_chars: 0,
            tool_calls: Vec::new(),
            written_as_text: false,
            stop_reason: None,
            error: None,
            ended: false,
        });
        Some(calls.len() - 1)
    }

    /// Applies `change` to the record at `index` (nothing when the lock is poisoned: the
    /// trace then lacks a detail, the run goes on).
    fn update(&self, index: usize, change: impl FnOnce(&mut RecordedCall)) {
        if let Ok(mut calls) = self.calls.lock()
            && let Some(call) = calls.get_mut(index)
        {
            change(call);
        }
    }

    /// Notes one streamed event.
    fn observe(&self, index: usize, event: &ModelEvent) {
        self.update(index, |call| {
            if call.first_token_seconds.is_none()
                && matches!(event, ModelEvent::TextDelta(_) | ModelEvent::ToolCall(_))
            {
                call.first_token_seconds = Some(seconds(call.started));
            }
            match event {
                ModelEvent::TextDelta(text) => call.text.push_str(text),
                ModelEvent::ToolCall(request) => call.tool_calls.push(request.clone()),
                ModelEvent::Usage(usage) => call.usage.fill_from(usage),
                ModelEvent::Finished { stop_reason } => call.stop_reason.clone_from(stop_reason),
            }
        });
    }

    /// Ends the record at `index`, failed with `error` or whole.
    fn end(&self, index: usize, error: Option<String>) {
        let offered: Vec<&str> = self.offered.iter().map(String::as_str).collect();
        let read_text = self.text_calls == TextToolCalls::Auto;
        self.update(index, |call| {
            if call.ended {
                return;
            }
            call.ended = true;
            call.seconds = Some(seconds(call.started));
            if error.is_none()
                && read_text
                && call.tool_calls.is_empty()
                && let Some(written) = text_calls::parse(&call.text, &offered, 1)
            {
                call.tool_calls = written;
                call.written_as_text = true;
            }
            call.error = error;
            call.text_chars = call.text.chars().count();
            call.text = cut(&call.text, TEXT_CHARS);
        });
    }
}

/// Seconds since `started`, to the millisecond.
fn seconds(started: Instant) -> f64 {
    (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0
}

/// Wraps `model` so every call is recorded in `log`.
pub fn traced(model: Arc<dyn ChatModel>, log: Arc<CallLog>) -> Arc<dyn ChatModel> {
    Arc::new(TracingModel { inner: model, log })
}

/// A [`ChatModel`] that records its inner model's calls.
struct TracingModel {
    inner: Arc<dyn ChatModel>,
    log: Arc<CallLog>,
}

#[async_trait]
impl ChatModel for TracingModel {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn is_configured(&self) -> bool {
        self.inner.is_configured()
    }

    fn provider_name(&self) -> &'static str {
        self.inner.provider_name()
    }

    fn model_name(&self) -> &str {
        self.inner.model_name()
    }

    async fn stream(&self, request: &ModelRequest) -> Result<ModelStream, ProviderError> {
        let index = self.log.begin();
        match self.inner.stream(request).await {
            Ok(inner) => Ok(Box::pin(RecordingStream {
                inner,
                log: Arc::clone(&self.log),
                index,
            })),
            Err(err) => {
                if let Some(index) = index {
                    self.log.end(index, Some(err.to_string()));
                }
                Err(err)
            }
        }
    }
}

/// An answer stream that notes each event in the log, and the end however it comes (the
/// last event, an error, or being dropped early by a cancelled turn).
struct RecordingStream {
    inner: ModelStream,
    log: Arc<CallLog>,
    index: Option<usize>,
}

impl Stream for RecordingStream {
    type Item = Result<ModelEvent, ProviderError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let poll = this.inner.as_mut().poll_next(cx);
        if let (Poll::Ready(item), Some(index)) = (&poll, this.index) {
            match item {
                Some(Ok(event)) => {
                    this.log.observe(index, event);
                    if matches!(event, ModelEvent::Finished { .. }) {
                        this.log.end(index, None);
                    }
                }
                Some(Err(err)) => this.log.end(index, Some(err.to_string())),
                None => this.log.end(index, None),
            }
        }
        poll
    }
}

impl Drop for RecordingStream {
    fn drop(&mut self) {
        if let Some(index) = self.index {
            // Ending an ended record changes nothing.
            self.log.end(
                index,
                Some("the answer was dropped before its end (the turn was cancelled)".into()),
            );
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use futures::StreamExt;

    use super::*;
    use crate::agent::{
        model::ModelResponse,
        providers::replay::{ReplayModel, ReplayScript},
    };

    #[tokio::test]
    async fn a_traced_model_answers_unchanged_and_records_each_call() {
        let script = ReplayScript::parse(
            r#"{"responses": [
                {"text": "Noting it.", "tool_calls": [{"name": "set_objective",
                  "arguments": {"objective": "x"}}],
                 "usage": {"prompt_tokens": 100, "cached_tokens": 60, "completion_tokens": 9}},
                {"text": "```json\n{\"name\": \"list_todos\", \"arguments\": {}}\n```"},
                {"text": "Done."}
            ]}"#,
        )
        .unwrap();
        let inner: Arc<dyn ChatModel> =
            Arc::new(ReplayModel::new(std::path::Path::new("t"), script));
        let log = CallLog::new(&["set_objective", "list_todos"], TextToolCalls::Auto);
        let model = traced(inner, Arc::clone(&log));
        log.set_turn(1);
        let first = ModelResponse::collect(model.stream(&ModelRequest::default()).await.unwrap())
            .await
            .unwrap();
        assert_eq!(first.text, "Noting it.");
        assert_eq!(first.tool_calls.len(), 1);
        log.set_turn(2);
        for _ in 0..2 {
            let mut stream = model.stream(&ModelRequest::default()).await.unwrap();
            while stream.next().await.is_some() {}
        }
        let calls = log.calls();
        assert_eq!(calls.len(), 3);
        assert_eq!(calls[0].turn, 1);
        assert_eq!(calls[0].usage.cached_tokens, Some(60));
        assert_eq!(calls[0].stop_reason.as_deref(), Some("tool_calls"));
        assert!(calls[0].seconds.is_some() && calls[0].first_token_seconds.is_some());
        assert!(calls[1].written_as_text);
        assert_eq!(calls[1].tool_calls[0].name, "list_todos");
        assert_eq!(calls[2].turn, 2);
        assert!(calls[2].tool_calls.is_empty());
        assert_eq!(calls[2].text, "Done.");
    }

    #[tokio::test]
    async fn a_failed_or_dropped_call_is_recorded_with_why() {
        let script = ReplayScript::parse(
            r#"{"responses": [{"text": "Next", "error": "reset"}, {"text": "a b c"}]}"#,
        )
        .unwrap();
        let inner: Arc<dyn ChatModel> =
            Arc::new(ReplayModel::new(std::path::Path::new("t"), script));
        let log = CallLog::new(&[], TextToolCalls::Auto);
        let model = traced(inner, Arc::clone(&log));
        let failed =
            ModelResponse::collect(model.stream(&ModelRequest::default()).await.unwrap()).await;
        assert!(failed.is_err());
        drop(model.stream(&ModelRequest::default()).await.unwrap());
        let calls = log.calls();
        assert!(calls[0].error.as_deref().unwrap().contains("reset"));
        assert!(calls[1].error.as_deref().unwrap().contains("dropped"));
    }
}
