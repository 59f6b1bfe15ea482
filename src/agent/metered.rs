//! A [`ChatModel`] wrapper that records each call's latency and outcome in the process metrics
//! (`haico_model_call*`, see [`crate::metrics`]); it behaves exactly like the model it wraps.

use std::{
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
    time::Instant,
};

use async_trait::async_trait;
use futures::Stream;

use super::model::{ChatModel, ModelEvent, ModelRequest, ModelStream, ProviderError};

/// Wraps `model` so each call's latency and outcome are recorded.
pub fn metered(model: Arc<dyn ChatModel>) -> Arc<dyn ChatModel> {
    Arc::new(MeteredModel { inner: model })
}

/// A [`ChatModel`] that times its inner model's calls.
struct MeteredModel {
    inner: Arc<dyn ChatModel>,
}

#[async_trait]
impl ChatModel for MeteredModel {
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
        let started = Instant::now();
        match self.inner.stream(request).await {
            Ok(inner) => Ok(Box::pin(TimedStream {
                inner,
                started,
                ended: false,
            })),
            Err(err) => {
                crate::metrics::model_error(err.kind(), started.elapsed());
                Err(err)
            }
        }
    }
}

/// A model's answer stream that records the call when it ends, fails or is dropped early (a
/// cancelled turn).
struct TimedStream {
    inner: ModelStream,
    started: Instant,
    ended: bool,
}

impl Stream for TimedStream {
    type Item = Result<ModelEvent, ProviderError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let poll = this.inner.as_mut().poll_next(cx);
        if !this.ended {
            match &poll {
                Poll::Ready(None | Some(Ok(ModelEvent::Finished { .. }))) => {
                    this.ended = true;
                    crate::metrics::model_call("success", this.started.elapsed());
                }
                Poll::Ready(Some(Err(err))) => {
                    this.ended = true;
                    crate::metrics::model_error(err.kind(), this.started.elapsed());
                }
                Poll::Ready(Some(Ok(_))) | Poll::Pending => {}
            }
        }
        poll
    }
}

impl Drop for TimedStream {
    fn drop(&mut self) {
        if !self.ended {
            crate::metrics::model_call("cancelled", self.started.elapsed());
        }
    }
}
