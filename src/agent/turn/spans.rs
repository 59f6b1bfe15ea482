//! The trace spans of a turn's model calls, in OpenTelemetry's generative-AI terms: what was
//! asked of which model, what it cost and how it ended (docs/OBSERVABILITY.md). The turn's own
//! span is opened where the turn starts (`mod.rs`).

use std::time::Duration;

use serde_json::Value;

use super::{Answer, Outcome};
use crate::agent::model::{ChatModel, ModelRequest};
use haico_store::usage::CallUsage;

/// The span of one model call, in OpenTelemetry's generative-AI terms (`chat {model}`); its
/// counts are filled in by [`record_model_call`] when the answer is in.
pub(super) fn model_call(model: &dyn ChatModel, request: &ModelRequest) -> tracing::Span {
    let span = tracing::info_span!(
        "model_call",
        otel.name = tracing::field::Empty,
        otel.kind = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
        gen_ai.operation.name = tracing::field::Empty,
        gen_ai.provider.name = tracing::field::Empty,
        gen_ai.request.model = tracing::field::Empty,
        gen_ai.request.max_tokens = tracing::field::Empty,
        gen_ai.request.temperature = tracing::field::Empty,
        gen_ai.request.seed = tracing::field::Empty,
        gen_ai.usage.input_tokens = tracing::field::Empty,
        gen_ai.usage.cache_read.input_tokens = tracing::field::Empty,
        gen_ai.usage.output_tokens = tracing::field::Empty,
        gen_ai.response.time_to_first_chunk = tracing::field::Empty,
        gen_ai.response.finish_reasons = tracing::field::Empty,
        error.type = tracing::field::Empty,
        gen_ai.system_instructions = tracing::field::Empty,
        gen_ai.input.messages = tracing::field::Empty,
        gen_ai.output.messages = tracing::field::Empty,
    );
    if !crate::telemetry::enabled() {
        return span;
    }
    let name = model.model_name();
    span.record("otel.name", format!("chat {name}").trim_end());
    span.record("otel.kind", "client");
    span.record("gen_ai.operation.name", "chat");
    span.record("gen_ai.provider.name", model.provider_name());
    if !name.is_empty() {
        span.record("gen_ai.request.model", name);
    }
    if let Some(max) = request.max_tokens {
        span.record("gen_ai.request.max_tokens", i64::from(max));
    }
    if let Some(temperature) = request.sampling.temperature {
        span.record("gen_ai.request.temperature", f64::from(temperature));
    }
    if let Some(seed) = request.sampling.seed {
        span.record("gen_ai.request.seed", crate::telemetry::count(seed));
    }
    if crate::telemetry::capture_content() {
        span.record("gen_ai.system_instructions", request.system.as_str());
        let mut messages = serde_json::to_value(&request.messages).unwrap_or_default();
        if !request.snapshot.is_empty()
            && let Value::Array(list) = &mut messages
        {
            list.push(serde_json::json!({"role": "snapshot", "content": request.snapshot}));
        }
        span.record("gen_ai.input.messages", messages.to_string());
    }
    span
}

/// Fills in what one model call cost and how it ended.
pub(super) fn record_model_call(
    span: &tracing::Span,
    call: Option<&CallUsage>,
    answer: &Result<Answer, Outcome>,
) {
    if let Some(call) = call {
        if let Some(tokens) = call.prompt_tokens {
            span.record("gen_ai.usage.input_tokens", crate::telemetry::count(tokens));
        }
        if let Some(tokens) = call.cached_tokens {
            span.record(
                "gen_ai.usage.cache_read.input_tokens",
                crate::telemetry::count(tokens),
            );
        }
        if let Some(tokens) = call.completion_tokens {
            span.record(
                "gen_ai.usage.output_tokens",
                crate::telemetry::count(tokens),
            );
        }
        if let Some(ms) = call.first_token_ms {
            span.record(
                "gen_ai.response.time_to_first_chunk",
                Duration::from_millis(ms).as_secs_f64(),
            );
        }
    }
    match answer {
        Ok(answer) => {
            if crate::telemetry::capture_content() {
                let calls: Vec<Value> = answer
                    .calls
                    .iter()
                    .map(|c| serde_json::json!({"name": c.name, "arguments": c.arguments}))
                    .collect();
                let output = serde_json::json!([
                    {"role": "assistant", "content": answer.text, "tool_calls": calls}
                ]);
                span.record("gen_ai.output.messages", output.to_string());
            }
        }
        Err(Outcome::Cancelled) => {
            span.record("error.type", "cancelled");
        }
        Err(_) => {
            span.record("error.type", "model_error");
            span.record("otel.status_code", "ERROR");
        }
    }
}
