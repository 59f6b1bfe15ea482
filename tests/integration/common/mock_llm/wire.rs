//! The SSE frames of the mock servers, byte for byte as the providers send them: OpenAI's
//! `data: {chat.completion.chunk}` lines ending in `data: [DONE]`, and Anthropic's named
//! `event:` / `data:` pairs from `message_start` to `message_stop`.

use serde_json::{Value, json};

use super::{Call, Script};

// ---- OpenAI wire format -------------------------------------------------------------------

fn openai_chunk(delta: Value, finish_reason: Option<&str>) -> String {
    let chunk = json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "mock-model",
        "system_fingerprint": "fp_mock",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}],
        "usage": null
    });
    format!("data: {chunk}\n\n")
}

pub(super) fn openai_frames(
    text: &str,
    calls: &[Call],
    ids: &[String],
    script: &Script,
) -> Vec<String> {
    let mut frames = vec![openai_chunk(
        json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!("") }}),
        None,
    )];
    for piece in split(text, script.chunk_chars) {
        frames.push(openai_chunk(json!({"content": piece}), None));
    }
    for (index, (call, id)) in calls.iter().zip(ids).enumerate() {
        frames.push(openai_chunk(
            json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                                   "function": {"name": call.name, "arguments": ""}}]}),
            None,
        ));
        for piece in split(&call.arguments, script.chunk_chars) {
            frames.push(openai_chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                None,
            ));
        }
    }
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    frames.push(openai_chunk(json!({}), Some(finish)));
    let (input, output) = script.usage;
    let mut usage = json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "mock-model",
        "system_fingerprint": "fp_mock",
        "choices": [],
        "usage": {"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output}
    });
    if script.llama_timings {
        let cached = script.cached.unwrap_or(0);
        usage["timings"] = json!({
            "prompt_n": input - cached, "cache_n": cached, "predicted_n": output,
            "prompt_ms": 12.5, "predicted_ms": 30.0
        });
    } else if let Some(cached) = script.cached {
        usage["usage"]["prompt_tokens_details"] = json!({"cached_tokens": cached});
    }
    frames.push(format!("data: {usage}\n\n"));
    frames.push("data: [DONE]\n\n".to_string());
    frames
}

// ---- Anthropic wire format ----------------------------------------------------------------

/// One Anthropic SSE frame: `event: <name>` and its JSON `data`.
pub fn anthropic_event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// `message_start`, its usage split as Anthropic splits it: input read from the cache apart
/// from the rest.
fn message_start(input_tokens: u32, cached: Option<u32>) -> Value {
    let cached = cached.unwrap_or(0);
    json!({"type": "message_start", "message": {
        "id": "msg_mock", "type": "message", "role": "assistant", "content": [],
        "model": "mock-model", "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": input_tokens - cached, "cache_read_input_tokens": cached,
                  "cache_creation_input_tokens": 0, "output_tokens": 1}
    }})
}

pub(super) fn anthropic_frames(
    text: &str,
    calls: &[Call],
    ids: &[String],
    script: &Script,
) -> Vec<String> {
    let mut frames = vec![anthropic_event(
        "message_start",
        message_start(script.usage.0, script.cached),
    )];
    let mut index = 0;
    if !text.is_empty() {
        frames.push(anthropic_event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
                   "content_block": {"type": "text", "text": ""}}),
        ));
        frames.push(anthropic_event("ping", json!({"type": "ping"})));
        for piece in split(text, script.chunk_chars) {
            frames.push(anthropic_event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                       "delta": {"type": "text_delta", "text": piece}}),
            ));
        }
        frames.push(anthropic_event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    for (call, id) in calls.iter().zip(ids) {
        frames.push(anthropic_event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
                   "content_block": {"type": "tool_use", "id": id, "name": call.name, "input": {}}}),
        ));
        let mut parts = vec![String::new()];
        parts.extend(split(&call.arguments, script.chunk_chars));
        for piece in parts {
            frames.push(anthropic_event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                       "delta": {"type": "input_json_delta", "partial_json": piece}}),
            ));
        }
        frames.push(anthropic_event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    let stop = if calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    frames.push(anthropic_event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
               "usage": {"output_tokens": script.usage.1}}),
    ));
    frames.push(anthropic_event(
        "message_stop",
        json!({"type": "message_stop"}),
    ));
    frames
}

/// `text` in pieces of at most `chars` characters.
pub fn split(text: &str, chars: usize) -> Vec<String> {
    let chars_of: Vec<char> = text.chars().collect();
    chars_of
        .chunks(chars.max(1))
        .map(|piece| piece.iter().collect())
        .collect()
}

/// A valid first chunk, then one whose JSON is cut short.
pub(super) fn openai_malformed() -> Vec<String> {
    vec![
        openai_chunk(json!({"role": "assistant", "content": ""}), None),
        "data: {\"id\":\"chatcmpl-mock\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"oo\n\n"
            .to_string(),
        "data: [DONE]\n\n".to_string(),
    ]
}

/// `message_start`, then a `content_block_delta` whose JSON is cut short.
pub(super) fn anthropic_malformed(input_tokens: u32) -> Vec<String> {
    vec![
        anthropic_event("message_start", message_start(input_tokens, None)),
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"oo\n\n"
            .to_string(),
        anthropic_event("message_stop", json!({"type": "message_stop"})),
    ]
}
