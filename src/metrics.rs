//! Prometheus metrics: what the server, the tool runtime and the agent count and time, and the
//! process-wide recorder `GET /metrics` renders.
//!
//! Instrumented code records through the `metrics` facade (a counter or histogram macro is an
//! atomic update on an already registered series), so the tool runtime and the agent need no
//! handle passed around. The recorder is installed once per process, on first use, by
//! [`handle`]; calling it again (every test server does) returns the same recorder. Until it
//! is installed, recording is a no-op.
//!
//! Every label has a bounded set of values: HTTP routes are the router's templates (never the
//! raw path), tool names are those of the toolset (a name the model made up is `unknown`), and
//! outcomes and error kinds are fixed lists.
//!
//! | metric | type | labels |
//! | --- | --- | --- |
//! | `haico_http_requests_total` | counter | `method`, `route`, `status` |
//! | `haico_http_request_duration_seconds` | histogram | `method`, `route`, `status` |
//! | `haico_agent_turns_started_total` | counter | |
//! | `haico_agent_turns_finished_total` | counter | `status` (`completed`, `failed`, `cancelled`) |
//! | `haico_tool_calls_total` | counter | `tool`, `outcome` (`success` or a failure kind) |
//! | `haico_tool_call_duration_seconds` | histogram | `tool`, `outcome` |
//! | `haico_model_calls_total` | counter | `outcome` (`success`, `error`, `cancelled`) |
//! | `haico_model_call_duration_seconds` | histogram | `outcome` |
//! | `haico_model_call_errors_total` | counter | `kind` (e.g. `timeout`, `rate_limited`) |

use std::{
    pin::Pin,
    sync::{Arc, OnceLock},
    task::{Context, Poll},
    time::{Duration, Instant},
};

use ::metrics::{Unit, counter, describe_counter, describe_histogram, histogram};
use async_trait::async_trait;
use futures::Stream;
use metrics_exporter_prometheus::{BuildError, Matcher, PrometheusBuilder, PrometheusHandle};

use crate::{
    agent::model::{ChatModel, ModelEvent, ModelRequest, ModelStream, ProviderError},
    tools::{FailureKind, Toolset},
};

/// HTTP requests answered.
pub const HTTP_REQUESTS: &str = "haico_http_requests_total";
/// Time from a request's arrival to its response head (for event streams: to the stream's
/// start, not its end).
pub const HTTP_REQUEST_DURATION: &str = "haico_http_request_duration_seconds";
/// Agent turns started.
pub const TURNS_STARTED: &str = "haico_agent_turns_started_total";
/// Agent turns ended and recorded.
pub const TURNS_FINISHED: &str = "haico_agent_turns_finished_total";
/// Tool calls, through the agent or the tools endpoint.
pub const TOOL_CALLS: &str = "haico_tool_calls_total";
/// Wall time of a tool call, its transaction included.
pub const TOOL_CALL_DURATION: &str = "haico_tool_call_duration_seconds";
/// Language model calls.
pub const MODEL_CALLS: &str = "haico_model_calls_total";
/// Wall time of a model call, from the request (retries included) to the end of its stream.
pub const MODEL_CALL_DURATION: &str = "haico_model_call_duration_seconds";
/// Failed language model calls, by error kind.
pub const MODEL_CALL_ERRORS: &str = "haico_model_call_errors_total";

/// HTTP latency buckets, in seconds (Prometheus' usual ones, from 1 ms).
const HTTP_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];
/// Tool call buckets: a call is a short transaction, typically well under 10 ms.
const TOOL_BUCKETS: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0,
];
/// Model call buckets: from a local model's quick answer to a long generation.
const MODEL_BUCKETS: &[f64] = &[
    0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0,
];

/// How often histogram samples are folded into their buckets between scrapes.
const UPKEEP_INTERVAL: Duration = Duration::from_secs(5);

/// The process-wide Prometheus recorder, installed on the first call and shared afterwards.
///
/// If another recorder was installed first (an embedding program's), the returned handle
/// renders haico's own, empty recorder and a warning is logged; nothing panics.
pub fn handle() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let recorder = match builder() {
            Ok(builder) => builder.build_recorder(),
            Err(err) => {
                tracing::warn!(target: "haico::metrics", error = %err, "metric buckets rejected; using defaults");
                PrometheusBuilder::new().build_recorder()
            }
        };
        let handle = recorder.handle();
        if ::metrics::set_global_recorder(recorder).is_err() {
            tracing::warn!(
                target: "haico::metrics",
                "another metrics recorder is installed; /metrics shows nothing of haico's"
            );
        }
        describe();
        let upkeep = handle.clone();
        let spawned = std::thread::Builder::new()
            .name("haico-metrics".to_string())
            .spawn(move || {
                loop {
                    std::thread::sleep(UPKEEP_INTERVAL);
                    upkeep.run_upkeep();
                }
            });
        if let Err(err) = spawned {
            // Rendering runs the upkeep too, so only memory between scrapes suffers.
            tracing::warn!(target: "haico::metrics", error = %err, "could not start the metrics upkeep thread");
        }
        handle
    })
}

/// The current metrics in Prometheus' text exposition format.
pub fn render() -> String {
    let handle = handle();
    handle.run_upkeep();
    handle.render()
}

fn builder() -> Result<PrometheusBuilder, BuildError> {
    PrometheusBuilder::new()
        .set_buckets(HTTP_BUCKETS)?
        .set_buckets_for_metric(Matcher::Full(TOOL_CALL_DURATION.to_string()), TOOL_BUCKETS)?
        .set_buckets_for_metric(
            Matcher::Full(MODEL_CALL_DURATION.to_string()),
            MODEL_BUCKETS,
        )
}

fn describe() {
    describe_counter!(
        HTTP_REQUESTS,
        Unit::Count,
        "HTTP requests answered, by method, route template and status."
    );
    describe_histogram!(
        HTTP_REQUEST_DURATION,
        Unit::Seconds,
        "Time from a request's arrival to its response head, by method, route template and status."
    );
    describe_counter!(TURNS_STARTED, Unit::Count, "Agent turns started.");
    describe_counter!(TURNS_FINISHED, Unit::Count, "Agent turns ended, by status.");
    describe_counter!(
        TOOL_CALLS,
        Unit::Count,
        "Tool calls, by tool and outcome (success or the failure kind)."
    );
    describe_histogram!(
        TOOL_CALL_DURATION,
        Unit::Seconds,
        "Wall time of tool calls, by tool and outcome."
    );
    describe_counter!(
        MODEL_CALLS,
        Unit::Count,
        "Language model calls, by outcome."
    );
    describe_histogram!(
        MODEL_CALL_DURATION,
        Unit::Seconds,
        "Wall time of language model calls, from the request (retries included) to the end of the stream."
    );
    describe_counter!(
        MODEL_CALL_ERRORS,
        Unit::Count,
        "Failed language model calls, by error kind."
    );
}

/// Records one answered HTTP request. `route` must be a route template or a fixed word.
pub fn http_request(method: &'static str, route: String, status: u16, elapsed: Duration) {
    let labels = [
        ("method", method.to_string()),
        ("route", route),
        ("status", status.to_string()),
    ];
    counter!(HTTP_REQUESTS, &labels).increment(1);
    histogram!(HTTP_REQUEST_DURATION, &labels).record(elapsed.as_secs_f64());
}

/// Records that an agent turn started.
pub fn turn_started() {
    counter!(TURNS_STARTED).increment(1);
}

/// Records that an agent turn ended with `status` (`completed`, `failed`, `cancelled`).
pub fn turn_finished(status: &'static str) {
    counter!(TURNS_FINISHED, "status" => status).increment(1);
}

/// Records one tool call: `name` as called, `failure` when it failed.
pub fn tool_call(tools: &Toolset, name: &str, failure: Option<FailureKind>, elapsed: Duration) {
    // Only names of the toolset become labels: the model may call tools that do not exist.
    let tool = tools.get(name).map_or("unknown", |tool| tool.name());
    let outcome = failure.map_or("success", failure_label);
    counter!(TOOL_CALLS, "tool" => tool, "outcome" => outcome).increment(1);
    histogram!(TOOL_CALL_DURATION, "tool" => tool, "outcome" => outcome)
        .record(elapsed.as_secs_f64());
}

/// The `outcome` label of a failed tool call.
pub fn failure_label(kind: FailureKind) -> &'static str {
    match kind {
        FailureKind::UnknownTool => "unknown_tool",
        FailureKind::UnknownThread => "unknown_thread",
        FailureKind::InvalidArguments => "invalid_arguments",
        FailureKind::NotFound => "not_found",
        FailureKind::Storage => "storage",
        FailureKind::Panic => "panic",
    }
}

/// The `kind` label of a failed model call.
pub fn provider_error_label(err: &ProviderError) -> &'static str {
    match err {
        ProviderError::NotConfigured(_) => "not_configured",
        ProviderError::UnknownProvider(_) => "unknown_provider",
        ProviderError::InvalidConfig(_) => "invalid_config",
        ProviderError::Unreachable { .. } => "unreachable",
        ProviderError::Timeout { .. } => "timeout",
        ProviderError::RateLimited { .. } => "rate_limited",
        ProviderError::Status { .. } => "status",
        ProviderError::StreamCut(_) => "stream_cut",
        ProviderError::Protocol(_) => "protocol",
        ProviderError::Api { .. } => "api",
        ProviderError::Request(_) => "request",
        ProviderError::ReplayScript { .. } => "replay_script",
        ProviderError::ReplayExhausted { .. } => "replay_exhausted",
    }
}

fn model_call(outcome: &'static str, elapsed: Duration) {
    counter!(MODEL_CALLS, "outcome" => outcome).increment(1);
    histogram!(MODEL_CALL_DURATION, "outcome" => outcome).record(elapsed.as_secs_f64());
}

fn model_error(err: &ProviderError, elapsed: Duration) {
    model_call("error", elapsed);
    counter!(MODEL_CALL_ERRORS, "kind" => provider_error_label(err)).increment(1);
}

/// Wraps `model` so each call's latency and outcome are recorded; behaves exactly like it.
pub fn instrument_model(model: Arc<dyn ChatModel>) -> Arc<dyn ChatModel> {
    Arc::new(InstrumentedModel { inner: model })
}

/// A [`ChatModel`] that times its inner model's calls.
struct InstrumentedModel {
    inner: Arc<dyn ChatModel>,
}

#[async_trait]
impl ChatModel for InstrumentedModel {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn is_configured(&self) -> bool {
        self.inner.is_configured()
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
                model_error(&err, started.elapsed());
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
                    model_call("success", this.started.elapsed());
                }
                Poll::Ready(Some(Err(err))) => {
                    this.ended = true;
                    model_error(err, this.started.elapsed());
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
            model_call("cancelled", self.started.elapsed());
        }
    }
}
