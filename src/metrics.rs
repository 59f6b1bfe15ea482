//! Prometheus metrics: what the server, the tool runtime and the agent count and time, and the
//! process-wide recorder `GET /metrics` renders.
//!
//! Instrumented code records through the small functions below (each a counter or histogram
//! update on the `metrics` facade, an atomic update on an already registered series), so the
//! tool runtime and the agent need no handle passed around, and this module depends on nothing
//! of theirs: they hand it plain labels. The recorder is installed once per process, on first use, by
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
//! | `haico_model_tokens_total` | counter | `kind` (`prompt`, `cached`, `completion`) |
//! | `haico_model_first_token_seconds` | histogram | |
//! | `haico_mcp_server_status` | gauge | `server`, `status` (`connecting`, `ready`, `failed`): 1 for the current one |
//! | `haico_mcp_calls_total` | counter | `server`, `tool`, `outcome` (`success`, `is_error` or a failure kind) |
//! | `haico_mcp_call_duration_seconds` | histogram | `server`, `tool`, `outcome` |
//! | `haico_mcp_approvals_total` | counter | `server`, `decision` (`approved`, `declined`, `timed_out`, `cancelled`) |
//! | `haico_otel_spans_exported_total` | counter | |
//! | `haico_otel_spans_dropped_total` | counter | |

use std::{sync::OnceLock, time::Duration};

use ::metrics::{
    Unit, counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram,
};
use metrics_exporter_prometheus::{BuildError, Matcher, PrometheusBuilder, PrometheusHandle};

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
/// Tokens the models read and wrote, as the providers reported them.
pub const MODEL_TOKENS: &str = "haico_model_tokens_total";
/// Time from a model request to the first piece of its answer.
pub const MODEL_FIRST_TOKEN: &str = "haico_model_first_token_seconds";
/// Always 1, labelled with this process's replica id.
pub const REPLICA_INFO: &str = "haico_replica_info";
/// 1 while the LISTEN connection hears the other replicas, else 0.
pub const DOORBELL_LISTENING: &str = "haico_events_listen_up";
/// Turns this replica ended because their replica's lease ran out.
pub const TURNS_EXPIRED: &str = "haico_agent_turns_expired_total";
/// Where each configured MCP server stands (1 on its current status, 0 on the others).
pub const MCP_SERVER_STATUS: &str = "haico_mcp_server_status";
/// Calls of other MCP servers' tools, by server, tool and outcome.
pub const MCP_CALLS: &str = "haico_mcp_calls_total";
/// Wall time of a call of another MCP server's tool.
pub const MCP_CALL_DURATION: &str = "haico_mcp_call_duration_seconds";
/// Calls that waited for a person's approval, by server and how the wait ended.
pub const MCP_APPROVALS: &str = "haico_mcp_approvals_total";

/// Trace spans the OTLP endpoint accepted (`src/telemetry`).
pub const OTEL_SPANS_EXPORTED: &str = "haico_otel_spans_exported_total";
/// Trace spans lost: the export queue was full, or the endpoint refused or did not answer.
pub const OTEL_SPANS_DROPPED: &str = "haico_otel_spans_dropped_total";

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
                tracing::warn!(error = %err, "metric buckets rejected; using defaults");
                PrometheusBuilder::new().build_recorder()
            }
        };
        let handle = recorder.handle();
        if ::metrics::set_global_recorder(recorder).is_err() {
            tracing::warn!(
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
            tracing::warn!(error = %err, "could not start the metrics upkeep thread");
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
        )?
        .set_buckets_for_metric(Matcher::Full(MODEL_FIRST_TOKEN.to_string()), MODEL_BUCKETS)
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
    describe_gauge!(
        MCP_SERVER_STATUS,
        "Where each configured MCP server stands: 1 on its current status."
    );
    describe_counter!(
        MCP_CALLS,
        Unit::Count,
        "Calls of other MCP servers' tools, by server, tool and outcome."
    );
    describe_counter!(
        MCP_APPROVALS,
        Unit::Count,
        "Calls that waited for a person's approval, by server and how the wait ended."
    );
    describe_histogram!(
        MCP_CALL_DURATION,
        Unit::Seconds,
        "Wall time of a call of another MCP server's tool."
    );
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
    describe_counter!(
        MODEL_TOKENS,
        Unit::Count,
        "Tokens of language model calls as the providers reported them: prompt (all of it), cached (the part of the prompt served from the provider's cache) and completion."
    );
    describe_histogram!(
        MODEL_FIRST_TOKEN,
        Unit::Seconds,
        "Time from a language model request to the first piece of its answer (mostly reading the uncached prompt)."
    );
    describe_gauge!(
        REPLICA_INFO,
        "Always 1; the `replica` label is this process's replica id (HAICO_REPLICA_ID)."
    );
    describe_gauge!(
        DOORBELL_LISTENING,
        "1 while other replicas' events arrive by LISTEN/NOTIFY, 0 while only by polling."
    );
    describe_counter!(
        OTEL_SPANS_EXPORTED,
        Unit::Count,
        "Trace spans the OTLP endpoint accepted."
    );
    describe_counter!(
        OTEL_SPANS_DROPPED,
        Unit::Count,
        "Trace spans that never reached the OTLP endpoint (queue full, endpoint down or slow)."
    );
    describe_counter!(
        TURNS_EXPIRED,
        Unit::Count,
        "Turns this replica ended because the replica running them stopped renewing their lease."
    );
}

/// Names this process's replica in `/metrics`.
pub fn replica(id: &str) {
    gauge!(REPLICA_INFO, "replica" => id.to_string()).set(1.0);
}

/// Records whether the doorbell is heard.
pub fn doorbell_listening(up: bool) {
    gauge!(DOORBELL_LISTENING).set(if up { 1.0 } else { 0.0 });
}

/// Records that a turn whose lease ran out was ended here.
pub fn turn_expired() {
    counter!(TURNS_EXPIRED).increment(1);
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

/// Records one tool call: `tool` is the name of a known tool (or `unknown`), `failure` the
/// failure kind's label when the call failed.
pub fn tool_call(tool: &'static str, failure: Option<&'static str>, elapsed: Duration) {
    let outcome = failure.unwrap_or("success");
    counter!(TOOL_CALLS, "tool" => tool, "outcome" => outcome).increment(1);
    histogram!(TOOL_CALL_DURATION, "tool" => tool, "outcome" => outcome)
        .record(elapsed.as_secs_f64());
}

/// Records where the MCP server `server` stands now (`connecting`, `ready` or `failed`).
/// Server names come from the configuration, so the label set is bounded.
pub fn mcp_server_status(server: &str, status: &str) {
    for each in ["connecting", "ready", "failed"] {
        let value = if each == status { 1.0 } else { 0.0 };
        gauge!(MCP_SERVER_STATUS, "server" => server.to_string(), "status" => each).set(value);
    }
}

/// Records one call of an MCP server's tool that ended with `outcome`.
pub fn mcp_call(server: &str, tool: &str, outcome: &'static str, elapsed: Duration) {
    let (server, tool) = (server.to_string(), tool.to_string());
    counter!(MCP_CALLS, "server" => server.clone(), "tool" => tool.clone(), "outcome" => outcome)
        .increment(1);
    histogram!(MCP_CALL_DURATION, "server" => server, "tool" => tool, "outcome" => outcome)
        .record(elapsed.as_secs_f64());
}

/// Records how a wait for a person's approval of a call of `server` ended (`approved`,
/// `declined`, `timed_out` or `cancelled`): how often people say no, or do not answer.
pub fn mcp_approval(server: &str, decision: &'static str) {
    counter!(MCP_APPROVALS, "server" => server.to_string(), "decision" => decision).increment(1);
}

/// Records spans the OTLP endpoint accepted.
pub fn otel_spans_exported(count: u64) {
    counter!(OTEL_SPANS_EXPORTED).increment(count);
}

/// Records spans that never reached the OTLP endpoint.
pub fn otel_spans_dropped(count: u64) {
    counter!(OTEL_SPANS_DROPPED).increment(count);
}

/// Records one model call that ended with `outcome` (`success`, `error` or `cancelled`).
pub fn model_call(outcome: &'static str, elapsed: Duration) {
    counter!(MODEL_CALLS, "outcome" => outcome).increment(1);
    histogram!(MODEL_CALL_DURATION, "outcome" => outcome).record(elapsed.as_secs_f64());
}

/// Records one failed model call and why (`kind`, e.g. `timeout`).
pub fn model_error(kind: &'static str, elapsed: Duration) {
    model_call("error", elapsed);
    counter!(MODEL_CALL_ERRORS, "kind" => kind).increment(1);
}

/// Records one model call's token counts (those the provider reported) and its time to first
/// token.
pub fn model_usage(
    prompt: Option<u64>,
    cached: Option<u64>,
    completion: Option<u64>,
    first_token: Option<Duration>,
) {
    for (kind, count) in [
        ("prompt", prompt),
        ("cached", cached),
        ("completion", completion),
    ] {
        if let Some(count) = count {
            counter!(MODEL_TOKENS, "kind" => kind).increment(count);
        }
    }
    if let Some(first_token) = first_token {
        histogram!(MODEL_FIRST_TOKEN).record(first_token.as_secs_f64());
    }
}
