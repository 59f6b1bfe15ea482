//! The path from a finished span to the collector, built so that it can never slow or break a
//! request: a span is handed to a bounded queue without waiting (a full queue drops it and
//! counts it), and one task on the runtime sends the queue in batches. A collector that is
//! down or slow costs the spans it misses, counted in `haico_otel_spans_dropped_total`, and
//! one warning per outage; nothing else.
//!
//! The SDK's own batch processors do the same batching but neither counts what it drops where
//! `/metrics` can show it, nor says when a collector comes back; this one is small enough to
//! own.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use opentelemetry::Context;
use opentelemetry_sdk::{
    error::OTelSdkResult,
    trace::{Span, SpanData, SpanExporter, SpanProcessor},
};
use tokio::sync::{mpsc, oneshot};

/// What the queue carries: a span, or a request to send everything held so far.
enum Item {
    Span(Box<SpanData>),
    Flush(oneshot::Sender<()>),
}

/// The processor the tracer provider calls when a span ends.
#[derive(Debug)]
pub struct QueueProcessor {
    queue: mpsc::Sender<Item>,
    state: Arc<State>,
}

/// How exports are going, shared by the processor and the export task.
#[derive(Debug)]
struct State {
    endpoint: String,
    /// A warning was logged for the current outage; cleared by the next export that works.
    failing: AtomicBool,
    /// A warning was logged for a full queue since the last export that worked.
    overflowing: AtomicBool,
}

/// The export task's end of the queue; [`Flusher::flush`] waits until what was queued before
/// it has been sent (or dropped).
#[derive(Debug, Clone)]
pub struct Flusher {
    queue: mpsc::Sender<Item>,
}

/// How the export task batches.
#[derive(Debug, Clone, Copy)]
pub struct Batching {
    pub max_queue: usize,
    pub max_batch: usize,
    pub delay: Duration,
}

/// Starts the export task on the current runtime; returns the processor for the provider and
/// a handle to flush at shutdown.
pub fn start<E>(exporter: E, batching: Batching, endpoint: String) -> (QueueProcessor, Flusher)
where
    E: SpanExporter + 'static,
{
    let (queue, receiver) = mpsc::channel(batching.max_queue.max(1));
    let state = Arc::new(State {
        endpoint,
        failing: AtomicBool::new(false),
        overflowing: AtomicBool::new(false),
    });
    tokio::spawn(run(exporter, receiver, batching, Arc::clone(&state)));
    (
        QueueProcessor {
            queue: queue.clone(),
            state,
        },
        Flusher { queue },
    )
}

impl SpanProcessor for QueueProcessor {
    fn on_start(&self, _span: &mut Span, _cx: &Context) {}

    fn on_end(&self, span: SpanData) {
        if !span.span_context.is_sampled() {
            return;
        }
        let Err(refused) = self.queue.try_send(Item::Span(Box::new(span))) else {
            return;
        };
        crate::metrics::otel_spans_dropped(1);
        // A closed queue means the runtime is ending; only a full one is worth a warning.
        if matches!(refused, mpsc::error::TrySendError::Full(_))
            && !self.state.overflowing.swap(true, Ordering::Relaxed)
        {
            tracing::warn!(
                endpoint = %self.state.endpoint,
                "the trace export queue is full: spans are dropped until it drains \
                 (counted in haico_otel_spans_dropped_total; OTEL_BSP_MAX_QUEUE_SIZE \
                 sets its size)"
            );
        }
    }

    /// Flushing is asynchronous here ([`Flusher::flush`]); the provider's blocking flush has
    /// nothing to wait for.
    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }

    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        Ok(())
    }
}

impl Flusher {
    /// Sends what is queued now, waiting at most `within`.
    pub async fn flush(&self, within: Duration) {
        let (done, wait) = oneshot::channel();
        let asked = tokio::time::timeout(within, self.queue.send(Item::Flush(done))).await;
        if matches!(asked, Ok(Ok(()))) {
            let _ = tokio::time::timeout(within, wait).await;
        }
    }
}

async fn run<E: SpanExporter>(
    exporter: E,
    mut receiver: mpsc::Receiver<Item>,
    batching: Batching,
    state: Arc<State>,
) {
    let mut batch: Vec<SpanData> = Vec::with_capacity(batching.max_batch);
    let mut tick = tokio::time::interval(batching.delay);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            item = receiver.recv() => match item {
                Some(Item::Span(span)) => {
                    batch.push(*span);
                    if batch.len() >= batching.max_batch {
                        send(&exporter, &mut batch, &state).await;
                    }
                }
                Some(Item::Flush(done)) => {
                    send(&exporter, &mut batch, &state).await;
                    let _ = done.send(());
                }
                None => {
                    send(&exporter, &mut batch, &state).await;
                    break;
                }
            },
            _ = tick.tick() => send(&exporter, &mut batch, &state).await,
        }
    }
}

/// Exports `batch` (emptying it); a failure drops its spans, counted, with one warning per
/// outage.
async fn send<E: SpanExporter>(exporter: &E, batch: &mut Vec<SpanData>, state: &State) {
    if batch.is_empty() {
        return;
    }
    let spans = std::mem::take(batch);
    let count = spans.len() as u64;
    match exporter.export(spans).await {
        Ok(()) => {
            crate::metrics::otel_spans_exported(count);
            state.overflowing.store(false, Ordering::Relaxed);
            if state.failing.swap(false, Ordering::Relaxed) {
                tracing::info!(endpoint = %state.endpoint, "traces reach the OTLP endpoint again");
            }
        }
        Err(err) => {
            crate::metrics::otel_spans_dropped(count);
            if !state.failing.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    endpoint = %state.endpoint,
                    error = %err,
                    "cannot export traces: spans are dropped until the OTLP endpoint answers \
                     (counted in haico_otel_spans_dropped_total); check \
                     OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_PROTOCOL"
                );
            }
        }
    }
}
