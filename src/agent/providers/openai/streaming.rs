//! The streamed answer of Chat Completions: `data:` lines each holding a
//! `chat.completion.chunk`, then `data: [DONE]`. Tool calls arrive in pieces keyed by `index`
//! (id and name first, the arguments split over many chunks) and are emitted whole when the
//! choice finishes; with `include_usage` a last chunk with no choices carries the usage.

use std::collections::{BTreeMap, VecDeque};

use serde::Deserialize;
use sse_stream::Sse;

use crate::{
    agent::model::ModelEvent, agent::model::ProviderError, agent::model::ToolCallRequest,
    agent::providers::sse::WireDecoder, agent::providers::sse::data, agent::providers::sse::parse,
};

use haico_store::usage::CallUsage;

/// `ChatCompletionChunk` (the fields haico reads). Some compatible servers put an `error`
/// object in a chunk instead of failing the HTTP request.
#[derive(Debug, Deserialize)]
pub struct ChatCompletionChunk {
    #[serde(default)]
    pub choices: Vec<ChunkChoice>,
    #[serde(default)]
    pub usage: Option<CompletionUsage>,
    /// llama.cpp's server adds its own counts to the last chunk: how many prompt tokens it
    /// read and how many it took from its prompt cache.
    #[serde(default)]
    pub timings: Option<Timings>,
    #[serde(default)]
    pub error: Option<ErrorObject>,
}

/// One choice of a chunk; haico asks for one (`n` = 1).
#[derive(Debug, Deserialize)]
pub struct ChunkChoice {
    #[serde(default)]
    pub index: u32,
    #[serde(default)]
    pub delta: ChoiceDelta,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// `delta`: what this chunk adds.
#[derive(Debug, Default, Deserialize)]
pub struct ChoiceDelta {
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub tool_calls: Option<Vec<ChoiceDeltaToolCall>>,
}

/// A piece of one tool call.
#[derive(Debug, Deserialize)]
pub struct ChoiceDeltaToolCall {
    pub index: u32,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub function: Option<ChoiceDeltaToolCallFunction>,
}

/// The function part of a tool-call piece.
#[derive(Debug, Deserialize)]
pub struct ChoiceDeltaToolCallFunction {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub arguments: Option<String>,
}

/// `CompletionUsage`.
#[derive(Debug, Deserialize)]
pub struct CompletionUsage {
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    #[serde(default)]
    pub completion_tokens: Option<u64>,
    #[serde(default)]
    pub prompt_tokens_details: Option<PromptTokensDetails>,
}

/// `prompt_tokens_details`: OpenAI's count of prompt tokens served from its prompt cache.
#[derive(Debug, Deserialize)]
pub struct PromptTokensDetails {
    #[serde(default)]
    pub cached_tokens: Option<u64>,
}

/// llama.cpp's `timings` (the fields haico reads): `prompt_n` tokens read, `cache_n` taken
/// from the cache, `predicted_n` written.
#[derive(Debug, Deserialize)]
pub struct Timings {
    #[serde(default)]
    pub prompt_n: Option<u64>,
    #[serde(default)]
    pub cache_n: Option<u64>,
    #[serde(default)]
    pub predicted_n: Option<u64>,
}

/// An error object sent in the stream.
#[derive(Debug, Deserialize)]
pub struct ErrorObject {
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub code: Option<serde_json::Value>,
    #[serde(default)]
    pub message: Option<String>,
}

impl From<ErrorObject> for ProviderError {
    fn from(error: ErrorObject) -> Self {
        let code = error.code.map(|code| match code {
            serde_json::Value::String(text) => text,
            other => other.to_string(),
        });
        ProviderError::Api {
            kind: error.kind.or(code).unwrap_or_else(|| "error".into()),
            message: error.message.unwrap_or_default(),
        }
    }
}

/// One call's counts from the standard `usage` and, where it lacks them, llama.cpp's `timings`.
fn call_usage(usage: Option<CompletionUsage>, timings: Option<Timings>) -> CallUsage {
    let (prompt, cached, completion) = match usage {
        Some(usage) => (
            usage.prompt_tokens,
            usage
                .prompt_tokens_details
                .and_then(|details| details.cached_tokens),
            usage.completion_tokens,
        ),
        None => (None, None, None),
    };
    let (read, from_cache, written) = match timings {
        Some(t) => (t.prompt_n, t.cache_n, t.predicted_n),
        None => (None, None, None),
    };
    let whole_prompt = match (read, from_cache) {
        (Some(read), Some(cached)) => Some(read.saturating_add(cached)),
        _ => None,
    };
    CallUsage {
        prompt_tokens: prompt.or(whole_prompt),
        cached_tokens: cached.or(from_cache),
        completion_tokens: completion.or(written),
        ..CallUsage::default()
    }
}

/// A tool call being assembled.
#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// The decoder of one answer.
#[derive(Debug, Default)]
pub struct ChunkDecoder {
    calls: BTreeMap<u32, PartialCall>,
    stop_reason: Option<String>,
}

impl ChunkDecoder {
    /// Emits the assembled tool calls, by index.
    fn flush_calls(&mut self, out: &mut VecDeque<ModelEvent>) -> Result<(), ProviderError> {
        for (index, call) in std::mem::take(&mut self.calls) {
            if call.name.is_empty() {
                return Err(ProviderError::Protocol(format!(
                    "tool call {index} arrived without a function name"
                )));
            }
            let arguments = if call.arguments.trim().is_empty() {
                "{}".to_string()
            } else {
                call.arguments
            };
            let id = if call.id.is_empty() {
                format!("call_{index}")
            } else {
                call.id
            };
            out.push_back(ModelEvent::ToolCall(ToolCallRequest {
                id,
                name: call.name,
                arguments,
            }));
        }
        Ok(())
    }

    fn apply(
        &mut self,
        choice: ChunkChoice,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<(), ProviderError> {
        if choice.index != 0 {
            return Ok(());
        }
        if let Some(text) = choice.delta.content.filter(|text| !text.is_empty()) {
            out.push_back(ModelEvent::TextDelta(text));
        }
        for piece in choice.delta.tool_calls.unwrap_or_default() {
            let call = self.calls.entry(piece.index).or_default();
            if let Some(id) = piece.id.filter(|id| !id.is_empty()) {
                call.id = id;
            }
            if let Some(function) = piece.function {
                if let Some(name) = function.name {
                    call.name.push_str(&name);
                }
                if let Some(arguments) = function.arguments {
                    call.arguments.push_str(&arguments);
                }
            }
        }
        if let Some(reason) = choice.finish_reason {
            self.stop_reason = Some(reason);
            self.flush_calls(out)?;
        }
        Ok(())
    }
}

impl WireDecoder for ChunkDecoder {
    fn decode(
        &mut self,
        event: &Sse,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<bool, ProviderError> {
        let Some(data) = data(event) else {
            return Ok(false);
        };
        if data == "[DONE]" {
            self.flush_calls(out)?;
            out.push_back(ModelEvent::Finished {
                stop_reason: self.stop_reason.take(),
            });
            return Ok(true);
        }
        let chunk: ChatCompletionChunk = parse(data)?;
        if let Some(error) = chunk.error {
            return Err(error.into());
        }
        for choice in chunk.choices {
            self.apply(choice, out)?;
        }
        if chunk.usage.is_some() || chunk.timings.is_some() {
            out.push_back(ModelEvent::Usage(call_usage(chunk.usage, chunk.timings)));
        }
        Ok(false)
    }

    fn finish(&mut self, out: &mut VecDeque<ModelEvent>) -> Result<(), ProviderError> {
        // Some compatible servers omit `[DONE]`; an answer whose choice finished is complete.
        if self.stop_reason.is_none() {
            return Err(ProviderError::StreamCut(
                "the stream ended before the model finished its answer".into(),
            ));
        }
        self.flush_calls(out)?;
        out.push_back(ModelEvent::Finished {
            stop_reason: self.stop_reason.take(),
        });
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn feed(decoder: &mut ChunkDecoder, data: &str) -> Vec<ModelEvent> {
        let mut out = VecDeque::new();
        decoder
            .decode(&Sse::default().data(data), &mut out)
            .unwrap();
        out.into()
    }

    #[test]
    fn tool_call_pieces_are_assembled_by_index() {
        let mut decoder = ChunkDecoder::default();
        let call = |index: u32, id: &str, name: &str, args: &str| {
            format!(
                r#"{{"choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":{index},{id}"function":{{{name}"arguments":"{args}"}}}}]}},"finish_reason":null}}]}}"#
            )
        };
        assert!(feed(&mut decoder, &call(0, r#""id":"a","#, r#""name":"x","#, "")).is_empty());
        feed(&mut decoder, &call(1, r#""id":"b","#, r#""name":"y","#, ""));
        feed(&mut decoder, &call(0, "", "", r#"{\"k\":"#));
        feed(&mut decoder, &call(1, "", "", r#"[1"#));
        feed(&mut decoder, &call(0, "", "", r#"1}"#));
        let end = feed(
            &mut decoder,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        );
        assert_eq!(
            end,
            vec![
                ModelEvent::ToolCall(ToolCallRequest {
                    id: "a".into(),
                    name: "x".into(),
                    arguments: r#"{"k":1}"#.into()
                }),
                ModelEvent::ToolCall(ToolCallRequest {
                    id: "b".into(),
                    name: "y".into(),
                    arguments: "[1".into()
                }),
            ]
        );
        assert_eq!(
            feed(&mut decoder, "[DONE]"),
            vec![ModelEvent::Finished {
                stop_reason: Some("tool_calls".into())
            }]
        );
    }

    #[test]
    fn an_error_chunk_is_an_api_error() {
        let mut decoder = ChunkDecoder::default();
        let mut out = VecDeque::new();
        let error = decoder
            .decode(
                &Sse::default().data(r#"{"error":{"message":"model not found","code":404}}"#),
                &mut out,
            )
            .unwrap_err();
        assert_eq!(
            error,
            ProviderError::Api {
                kind: "404".into(),
                message: "model not found".into()
            }
        );
    }
}
