//! The streamed answer of the Messages API: `message_start` (input usage), then per content
//! block `content_block_start` / `content_block_delta`… / `content_block_stop`, then
//! `message_delta` (stop reason, output usage) and `message_stop`; `ping` and `error` may
//! come at any time. A tool call's input arrives as `input_json_delta` fragments and is
//! emitted whole at its block's `content_block_stop`.

use std::collections::{HashMap, VecDeque};

use serde::Deserialize;
use serde_json::Value;
use sse_stream::Sse;

use crate::{
    agent::model::ModelEvent, agent::model::ProviderError, agent::model::ToolCallRequest,
    agent::providers::sse::WireDecoder, agent::providers::sse::data, agent::providers::sse::parse,
};

use haico_store::usage::CallUsage;

/// `RawMessageStreamEvent`, tagged by `type`; unknown types are skipped, as the API asks.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RawMessageStreamEvent {
    MessageStart {
        message: Message,
    },
    ContentBlockStart {
        index: u32,
        content_block: ContentBlock,
    },
    ContentBlockDelta {
        index: u32,
        delta: RawContentBlockDelta,
    },
    ContentBlockStop {
        index: u32,
    },
    MessageDelta {
        delta: MessageDeltaBody,
        #[serde(default)]
        usage: Option<MessageDeltaUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: ErrorObject,
    },
    #[serde(other)]
    Unknown,
}

/// The message skeleton of `message_start`.
#[derive(Debug, Deserialize)]
pub struct Message {
    #[serde(default)]
    pub usage: Option<Usage>,
}

/// `Usage` of `message_start`. Anthropic counts input read from the cache and input written
/// to it apart from `input_tokens`; the prompt is all three.
#[derive(Debug, Default, Deserialize)]
pub struct Usage {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    pub cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: u64,
}

impl Usage {
    /// The call's counts in haico's terms.
    fn for_call(&self) -> CallUsage {
        let cached = self.cache_read_input_tokens.unwrap_or(0);
        CallUsage {
            prompt_tokens: Some(
                self.input_tokens
                    .saturating_add(self.cache_creation_input_tokens.unwrap_or(0))
                    .saturating_add(cached),
            ),
            cached_tokens: Some(cached),
            completion_tokens: Some(self.output_tokens),
            ..CallUsage::default()
        }
    }
}

/// The block a `content_block_start` opens (thinking and other kinds are skipped).
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    #[serde(other)]
    Other,
}

/// What a `content_block_delta` adds.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RawContentBlockDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    #[serde(other)]
    Other,
}

/// `delta` of `message_delta`.
#[derive(Debug, Deserialize)]
pub struct MessageDeltaBody {
    #[serde(default)]
    pub stop_reason: Option<String>,
}

/// `usage` of `message_delta`: cumulative counts.
#[derive(Debug, Deserialize)]
pub struct MessageDeltaUsage {
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
    #[serde(default)]
    pub cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    pub cache_read_input_tokens: Option<u64>,
}

/// The `error` of an `error` event, e.g. `overloaded_error`.
#[derive(Debug, Deserialize)]
pub struct ErrorObject {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub message: String,
}

impl From<ErrorObject> for ProviderError {
    fn from(error: ErrorObject) -> Self {
        ProviderError::Api {
            kind: error.kind,
            message: error.message,
        }
    }
}

/// An open content block.
#[derive(Debug)]
enum Block {
    Text,
    ToolUse {
        id: String,
        name: String,
        input: Value,
        json: String,
    },
    Other,
}

/// The decoder of one answer.
#[derive(Debug, Default)]
pub struct EventDecoder {
    blocks: HashMap<u32, Block>,
    usage: Usage,
    stop_reason: Option<String>,
}

impl EventDecoder {
    fn close_block(&mut self, index: u32, out: &mut VecDeque<ModelEvent>) {
        if let Some(Block::ToolUse {
            id,
            name,
            input,
            json,
        }) = self.blocks.remove(&index)
        {
            // Without any fragment the input is the (usually empty) object of the start event.
            let arguments = if json.trim().is_empty() {
                match input {
                    Value::Null => "{}".to_string(),
                    input => input.to_string(),
                }
            } else {
                json
            };
            out.push_back(ModelEvent::ToolCall(ToolCallRequest {
                id,
                name,
                arguments,
            }));
        }
    }

    fn end(&mut self, out: &mut VecDeque<ModelEvent>) {
        let mut open: Vec<u32> = self.blocks.keys().copied().collect();
        open.sort_unstable();
        for index in open {
            self.close_block(index, out);
        }
        out.push_back(ModelEvent::Usage(self.usage.for_call()));
        out.push_back(ModelEvent::Finished {
            stop_reason: self.stop_reason.take(),
        });
    }
}

impl WireDecoder for EventDecoder {
    fn decode(
        &mut self,
        event: &Sse,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<bool, ProviderError> {
        let Some(data) = data(event) else {
            return Ok(false);
        };
        match parse::<RawMessageStreamEvent>(data)? {
            RawMessageStreamEvent::MessageStart { message } => {
                self.usage = message.usage.unwrap_or_default();
            }
            RawMessageStreamEvent::ContentBlockStart {
                index,
                content_block,
            } => {
                let block = match content_block {
                    ContentBlock::Text { text } => {
                        if !text.is_empty() {
                            out.push_back(ModelEvent::TextDelta(text));
                        }
                        Block::Text
                    }
                    ContentBlock::ToolUse { id, name, input } => Block::ToolUse {
                        id,
                        name,
                        input,
                        json: String::new(),
                    },
                    ContentBlock::Other => Block::Other,
                };
                self.blocks.insert(index, block);
            }
            RawMessageStreamEvent::ContentBlockDelta { index, delta } => match delta {
                RawContentBlockDelta::TextDelta { text } => {
                    if !text.is_empty() {
                        out.push_back(ModelEvent::TextDelta(text));
                    }
                }
                RawContentBlockDelta::InputJsonDelta { partial_json } => {
                    match self.blocks.get_mut(&index) {
                        Some(Block::ToolUse { json, .. }) => json.push_str(&partial_json),
                        _ => {
                            return Err(ProviderError::Protocol(format!(
                                "input_json_delta for block {index}, which is not an open tool_use block"
                            )));
                        }
                    }
                }
                RawContentBlockDelta::Other => {}
            },
            RawMessageStreamEvent::ContentBlockStop { index } => self.close_block(index, out),
            RawMessageStreamEvent::MessageDelta { delta, usage } => {
                if delta.stop_reason.is_some() {
                    self.stop_reason = delta.stop_reason;
                }
                if let Some(usage) = usage {
                    let kept = &mut self.usage;
                    kept.input_tokens = usage.input_tokens.unwrap_or(kept.input_tokens);
                    kept.output_tokens = usage.output_tokens.unwrap_or(kept.output_tokens);
                    kept.cache_read_input_tokens = usage
                        .cache_read_input_tokens
                        .or(kept.cache_read_input_tokens);
                    kept.cache_creation_input_tokens = usage
                        .cache_creation_input_tokens
                        .or(kept.cache_creation_input_tokens);
                }
            }
            RawMessageStreamEvent::MessageStop => {
                self.end(out);
                return Ok(true);
            }
            RawMessageStreamEvent::Error { error } => return Err(error.into()),
            RawMessageStreamEvent::Ping | RawMessageStreamEvent::Unknown => {}
        }
        Ok(false)
    }

    fn finish(&mut self, out: &mut VecDeque<ModelEvent>) -> Result<(), ProviderError> {
        if self.stop_reason.is_none() {
            return Err(ProviderError::StreamCut(
                "the stream ended before message_stop".into(),
            ));
        }
        self.end(out);
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn feed(decoder: &mut EventDecoder, data: &str) -> Result<Vec<ModelEvent>, ProviderError> {
        let mut out = VecDeque::new();
        decoder.decode(&Sse::default().data(data), &mut out)?;
        Ok(out.into())
    }

    #[test]
    fn tool_use_input_is_assembled_from_fragments() {
        let mut decoder = EventDecoder::default();
        feed(
            &mut decoder,
            r#"{"type":"message_start","message":{"usage":{"input_tokens":7,"output_tokens":1}}}"#,
        )
        .unwrap();
        feed(&mut decoder, r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"set_objective","input":{}}}"#).unwrap();
        for piece in [r#"{\"obj"#, r#"ective\": "#, r#"\"ship\"}"#] {
            let data = format!(
                r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"input_json_delta","partial_json":"{piece}"}}}}"#
            );
            assert!(feed(&mut decoder, &data).unwrap().is_empty());
        }
        assert_eq!(
            feed(&mut decoder, r#"{"type":"content_block_stop","index":0}"#).unwrap(),
            vec![ModelEvent::ToolCall(ToolCallRequest {
                id: "toolu_1".into(),
                name: "set_objective".into(),
                arguments: r#"{"objective": "ship"}"#.into()
            })]
        );
        feed(&mut decoder, r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":12}}"#).unwrap();
        assert_eq!(
            feed(&mut decoder, r#"{"type":"message_stop"}"#).unwrap(),
            vec![
                ModelEvent::Usage(CallUsage {
                    prompt_tokens: Some(7),
                    cached_tokens: Some(0),
                    completion_tokens: Some(12),
                    ..CallUsage::default()
                }),
                ModelEvent::Finished {
                    stop_reason: Some("tool_use".into())
                }
            ]
        );
    }

    #[test]
    fn unknown_events_and_blocks_are_skipped() {
        let mut decoder = EventDecoder::default();
        feed(&mut decoder, r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#).unwrap();
        feed(&mut decoder, r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}"#).unwrap();
        assert!(
            feed(&mut decoder, r#"{"type":"some_future_event"}"#)
                .unwrap()
                .is_empty()
        );
        assert!(
            feed(&mut decoder, r#"{"type":"content_block_stop","index":0}"#)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn an_error_event_is_an_api_error() {
        let mut decoder = EventDecoder::default();
        let error = feed(
            &mut decoder,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        )
        .unwrap_err();
        assert!(error.is_transient());
        assert!(error.to_string().contains("Overloaded"));
    }
}
