//! OpenTelemetry traces: haico's `tracing` spans, sent over OTLP to whatever the person already
//! watches (Langfuse, Phoenix, Jaeger, Tempo, Datadog…), in the shapes the OpenTelemetry
//! semantic conventions give HTTP servers and generative-AI agents. `docs/OBSERVABILITY.md`
//! says what each span holds.
//!
//! Off unless the standard variables name an endpoint ([`Settings`]); off, no span gains a
//! layer and no header is read or written, so it costs nothing. On, spans reach the collector
//! through a bounded queue that never makes a request wait ([`export`]).
//!
//! The spans themselves are declared where the work happens (`http`, `agent::turn`,
//! `tools::runtime`, `mcp_client`, the store's transactions), with their OpenTelemetry names
//! and attributes as `tracing` fields (`otel.name`, `gen_ai.*`); [`propagation`] carries the
//! trace across process boundaries with W3C `traceparent`.

mod export;
mod http_client;
pub mod propagation;
mod settings;

use std::{
    sync::atomic::{AtomicBool, Ordering},
    time::Duration,
};

use opentelemetry::{KeyValue, trace::TracerProvider as _};
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::{Resource, propagation::TraceContextPropagator, trace::SdkTracerProvider};
use tracing::{Level, Subscriber};
use tracing_subscriber::{Layer, filter::filter_fn, registry::LookupSpan};

pub use settings::{Protocol, Settings, SettingsError};

static ENABLED: AtomicBool = AtomicBool::new(false);
static CAPTURE_CONTENT: AtomicBool = AtomicBool::new(false);

/// Whether spans leave the process; code that would only do work for the exporter (reading a
/// `traceparent`, filling an attribute that costs something to compute) asks first.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Whether message content (prompts, answers, tool arguments) may go into spans.
pub fn capture_content() -> bool {
    enabled() && CAPTURE_CONTENT.load(Ordering::Relaxed)
}

/// A count as a span attribute: OpenTelemetry's integers are `i64`, and `tracing` would
/// otherwise carry a `u64` as text.
pub fn count(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// Why the exporter could not be built.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error("building the OTLP exporter for {endpoint}: {source}")]
    Exporter {
        endpoint: String,
        #[source]
        source: opentelemetry_otlp::ExporterBuildError,
    },
    #[error("building the OTLP exporter's HTTP client: {0}")]
    Client(#[from] reqwest::Error),
}

/// A running exporter: the provider behind the `tracing` layer, and the queue to flush when
/// the process ends.
pub struct Telemetry {
    provider: SdkTracerProvider,
    flusher: export::Flusher,
    settings: Settings,
}

impl Telemetry {
    /// Starts exporting as `settings` say; call inside the runtime, before the first span.
    pub fn start(settings: Settings) -> Result<Self, TelemetryError> {
        let exporter_error = |source| TelemetryError::Exporter {
            endpoint: settings.endpoint.clone(),
            source,
        };
        let mut exporter = match settings.protocol {
            Protocol::HttpProtobuf => opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_endpoint(settings.endpoint.clone())
                .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
                .with_http_client(http_client::ExportClient::new(settings.export_timeout)?)
                .build()
                .map_err(exporter_error)?,
            Protocol::Grpc => opentelemetry_otlp::SpanExporter::builder()
                .with_tonic()
                .with_endpoint(settings.endpoint.clone())
                .build()
                .map_err(exporter_error)?,
        };
        let resource = resource();
        opentelemetry_sdk::trace::SpanExporter::set_resource(&mut exporter, &resource);
        let (processor, flusher) = export::start(
            exporter,
            export::Batching {
                max_queue: settings.max_queue,
                max_batch: settings.max_batch,
                delay: settings.delay,
            },
            settings.endpoint.clone(),
        );
        let provider = SdkTracerProvider::builder()
            .with_span_processor(processor)
            .with_resource(resource)
            .build();
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        CAPTURE_CONTENT.store(settings.capture_content, Ordering::Relaxed);
        ENABLED.store(true, Ordering::Relaxed);
        Ok(Self {
            provider,
            flusher,
            settings,
        })
    }

    /// The `tracing` layer that turns haico's spans into OpenTelemetry spans: spans of haico's
    /// own crates (the store's transactions are `debug` spans, present only for this layer)
    /// and, as span events, their `info` and louder events.
    pub fn layer<S>(&self) -> impl Layer<S> + use<S>
    where
        S: Subscriber + for<'span> LookupSpan<'span>,
    {
        let tracer = self.provider.tracer("haico");
        tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_tracked_inactivity(false)
            // haico reads a span's trace context from the span itself
            // (`OpenTelemetrySpanExt::context`), never from OpenTelemetry's thread-local
            // context, so entering a span (every poll of an instrumented future) need not
            // switch it.
            .with_context_activation(false)
            // haico sets a span's error status itself (`otel.status_code`); warnings and errors
            // logged inside a span stay events.
            .with_error_events_to_status(false)
            .with_error_events_to_exceptions(false)
            .with_error_fields_to_exceptions(false)
            .with_threads(false)
            .with_location(false)
            .with_target(false)
            .with_filter(
                filter_fn(|meta| {
                    let ours = meta.target().starts_with("haico");
                    let level = if meta.is_span() {
                        Level::DEBUG
                    } else {
                        Level::INFO
                    };
                    ours && *meta.level() <= level
                })
                .with_max_level_hint(tracing::level_filters::LevelFilter::DEBUG),
            )
    }

    /// The line logged at start, so a person sees where spans go.
    pub fn describe(&self) -> String {
        format!(
            "exporting traces over OTLP ({}) to {}{}",
            self.settings.protocol.as_str(),
            self.settings.endpoint,
            if self.settings.capture_content {
                ", with message content"
            } else {
                ""
            }
        )
    }

    /// Sends what is queued now, waiting at most `within`.
    pub async fn flush(&self, within: Duration) {
        self.flusher.flush(within).await;
    }

    /// Sends what is still queued (waiting at most a few seconds) and stops the provider.
    pub async fn shutdown(self) {
        self.flusher.flush(Duration::from_secs(5)).await;
        let provider = self.provider;
        // The provider's shutdown blocks; the queue is already drained.
        let _ = tokio::task::spawn_blocking(move || provider.shutdown()).await;
        ENABLED.store(false, Ordering::Relaxed);
    }
}

/// Who sends the spans: `service.name` is `haico` unless `OTEL_SERVICE_NAME` or
/// `OTEL_RESOURCE_ATTRIBUTES` say otherwise (the SDK reads both).
fn resource() -> Resource {
    let named = std::env::var("OTEL_SERVICE_NAME").is_ok_and(|v| !v.trim().is_empty())
        || std::env::var("OTEL_RESOURCE_ATTRIBUTES").is_ok_and(|v| v.contains("service.name="));
    let builder = Resource::builder()
        .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")));
    if named {
        builder.build()
    } else {
        builder.with_service_name("haico").build()
    }
}
