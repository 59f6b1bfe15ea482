//! Turns a provider's raw SSE events into [`ModelEvent`]s: the stream plumbing shared by the
//! providers, each of which supplies only a [`WireDecoder`] for its own event format.

use std::collections::VecDeque;

use futures::StreamExt;
use sse_stream::Sse;

use super::http::SseEvents;
use crate::agent::model::{ModelEvent, ModelStream, ProviderError};

/// A provider's event-format state machine.
pub trait WireDecoder: Send + 'static {
    /// Reads one SSE event, pushing the model events it completes. Returns `true` once the
    /// provider's end marker (`[DONE]`, `message_stop`) has been read.
    fn decode(
        &mut self,
        event: &Sse,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<bool, ProviderError>;

    /// Called when the body ends without the end marker: either the answer was complete
    /// anyway (push its last events) or it was cut off (an error).
    fn finish(&mut self, out: &mut VecDeque<ModelEvent>) -> Result<(), ProviderError>;
}

struct State<D> {
    events: SseEvents,
    decoder: D,
    pending: VecDeque<ModelEvent>,
    /// An error to yield once `pending` is drained; the stream ends after it.
    failure: Option<ProviderError>,
    done: bool,
}

/// The model stream of one answer: decoded events in order, ending after `Finished` or the
/// first error.
pub fn decode_stream<D: WireDecoder>(events: SseEvents, decoder: D) -> ModelStream {
    let state = State {
        events,
        decoder,
        pending: VecDeque::new(),
        failure: None,
        done: false,
    };
    futures::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(event) = state.pending.pop_front() {
                return Some((Ok(event), state));
            }
            if let Some(error) = state.failure.take() {
                state.done = true;
                return Some((Err(error), state));
            }
            if state.done {
                return None;
            }
            let outcome = match state.events.next().await {
                Some(Ok(event)) => state.decoder.decode(&event, &mut state.pending),
                Some(Err(error)) => Err(error),
                None => state.decoder.finish(&mut state.pending).map(|()| true),
            };
            match outcome {
                Ok(finished) => state.done = finished,
                Err(error) => state.failure = Some(error),
            }
        }
    })
    .boxed()
}

/// The `data` of an event, or `None` for events without data (comments, keep-alives).
pub fn data(event: &Sse) -> Option<&str> {
    event
        .data
        .as_deref()
        .map(str::trim)
        .filter(|data| !data.is_empty())
}

/// Parses one event's JSON data into a wire type, naming the culprit when it is malformed.
pub fn parse<T: serde::de::DeserializeOwned>(data: &str) -> Result<T, ProviderError> {
    serde_json::from_str(data).map_err(|e| {
        ProviderError::Protocol(format!(
            "malformed event data ({e}): {}",
            super::http::excerpt(data)
        ))
    })
}
