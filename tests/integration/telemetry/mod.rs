//! Traces as an observability tool receives them: haico exporting over OTLP to a real receiver
//! that decodes with the official protobuf definitions. Each test installs the process's
//! tracing subscriber, so each runs in a process of its own (`common::isolated`).

mod mcp;
mod receiver;
mod serve;
mod traces;

use std::time::Duration;

use haico::telemetry::{Protocol, Settings, Telemetry};
use tracing_subscriber::{Layer, layer::SubscriberExt, util::SubscriberInitExt};

/// Starts exporting to `endpoint` and installs the subscriber (once per process).
pub(super) fn export_to(endpoint: &str, export_timeout: Duration, max_queue: usize) -> Telemetry {
    let telemetry = Telemetry::start(Settings {
        protocol: Protocol::HttpProtobuf,
        endpoint: endpoint.to_string(),
        export_timeout,
        max_queue,
        max_batch: max_queue.min(512),
        delay: Duration::from_millis(50),
        capture_content: false,
    })
    .expect("the exporter starts");
    // The process's warnings on stderr too (shown when a test fails): an export that fails
    // says why there.
    let warnings = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_filter(tracing_subscriber::filter::LevelFilter::WARN);
    tracing_subscriber::registry()
        .with(telemetry.layer())
        .with(warnings)
        .init();
    telemetry
}
