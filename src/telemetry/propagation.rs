//! W3C trace context across process boundaries: read from the requests haico answers, written
//! into the requests it makes (to the model's server, to other MCP servers), so one trace
//! follows a person's request through every service that takes part. Nothing here runs while
//! export is off.

use opentelemetry::{Context, propagation::TextMapPropagator};
use opentelemetry_http::{HeaderExtractor, HeaderInjector};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// Makes the trace named by the request's `traceparent` (if any) the parent of `span`.
pub fn adopt_from_headers(span: &tracing::Span, headers: &axum::http::HeaderMap) {
    if !super::enabled() || !headers.contains_key("traceparent") {
        return;
    }
    let parent = TraceContextPropagator::new().extract(&HeaderExtractor(headers));
    let _ = span.set_parent(parent);
}

/// Makes the trace named by an MCP request's `_meta.traceparent` (SEP-414) the parent of
/// `span`.
pub fn adopt_from_meta(span: &tracing::Span, meta: &serde_json::Map<String, serde_json::Value>) {
    if !super::enabled() || !meta.contains_key("traceparent") {
        return;
    }
    let mut carrier = std::collections::HashMap::new();
    for key in ["traceparent", "tracestate"] {
        if let Some(value) = meta.get(key).and_then(|v| v.as_str()) {
            carrier.insert(key.to_string(), value.to_string());
        }
    }
    let parent = TraceContextPropagator::new().extract(&carrier);
    let _ = span.set_parent(parent);
}

/// Writes the current span's trace context into outgoing HTTP headers.
pub fn inject_headers(headers: &mut axum::http::HeaderMap) {
    if !super::enabled() {
        return;
    }
    let context = current();
    TraceContextPropagator::new().inject_context(&context, &mut HeaderInjector(headers));
}

/// The current span's `traceparent` and `tracestate`, for an MCP request's `_meta`.
pub fn current_fields() -> Vec<(String, String)> {
    if !super::enabled() {
        return Vec::new();
    }
    let mut carrier = std::collections::HashMap::new();
    TraceContextPropagator::new().inject_context(&current(), &mut carrier);
    let mut fields: Vec<(String, String)> = carrier.into_iter().collect();
    fields.sort();
    fields
}

fn current() -> Context {
    tracing::Span::current().context()
}
