//! The replay script file: its format, loading, and validation with errors that point at the
//! offending place (JSON path, and line and column for syntax and type errors).
//!
//! ```json
//! {"responses": [
//!   {"text": "Let me set that up.",
//!    "tool_calls": [{"name": "set_objective",
//!                    "arguments": {"objective": "Plan a trip",
//!                                  "action_and_reasoning": "Recording the goal."}}],
//!    "delay_ms": 0},
//!   {"text": "Done."}
//! ]}
//! ```
//!
//! `arguments` is an object (sent as its JSON text) or a string sent verbatim, which lets a
//! script play a model that writes malformed JSON. `error` makes the response fail after its
//! text, like a connection cut mid-answer.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::agent::model::ProviderError;

/// A whole script: the responses, played one per model call, in order.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayScript {
    pub responses: Vec<ReplayResponse>,
}

/// One scripted model answer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayResponse {
    /// Answer text, streamed word by word.
    #[serde(default)]
    pub text: String,
    /// Tool calls, emitted after the text.
    #[serde(default)]
    pub tool_calls: Vec<ReplayToolCall>,
    /// Pause before the answer starts, in milliseconds.
    #[serde(default)]
    pub delay_ms: u64,
    /// When set, the answer fails with this message after its text (and before any tool call).
    #[serde(default)]
    pub error: Option<String>,
    /// Token counts to report for this answer, as a provider would (for demos and for checking
    /// what haico does with them).
    #[serde(default)]
    pub usage: Option<ReplayUsage>,
}

/// Scripted token counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayUsage {
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    #[serde(default)]
    pub cached_tokens: Option<u64>,
    #[serde(default)]
    pub completion_tokens: Option<u64>,
}

/// One scripted tool call.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayToolCall {
    pub name: String,
    #[serde(default = "empty_object")]
    pub arguments: ReplayArguments,
}

/// Arguments as JSON to serialize, or raw text to pass through unchanged.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum ReplayArguments {
    Raw(String),
    Json(Value),
}

fn empty_object() -> ReplayArguments {
    ReplayArguments::Json(Value::Object(serde_json::Map::new()))
}

impl ReplayArguments {
    /// The arguments text the model "wrote".
    pub fn to_text(&self) -> String {
        match self {
            Self::Raw(text) => text.clone(),
            Self::Json(value) => value.to_string(),
        }
    }
}

impl ReplayScript {
    /// Reads and validates the script at `path`.
    pub fn load(path: &Path) -> Result<Self, ProviderError> {
        let fail = |message: String| ProviderError::ReplayScript {
            path: path.to_path_buf(),
            message,
        };
        let text =
            std::fs::read_to_string(path).map_err(|e| fail(format!("cannot read it: {e}")))?;
        Self::parse(&text).map_err(fail)
    }

    /// Parses and validates script text; the error says where the problem is.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let script: Self = serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
            let inner = e.inner();
            let at = e.path().to_string();
            let place = if at == "." {
                String::new()
            } else {
                format!(" at `{at}`")
            };
            format!(
                "line {}, column {}{place}: {inner}",
                inner.line(),
                inner.column()
            )
        })?;
        deserializer
            .end()
            .map_err(|e| format!("line {}, column {}: {e}", e.line(), e.column()))?;
        script.validate()?;
        Ok(script)
    }

    fn validate(&self) -> Result<(), String> {
        if self.responses.is_empty() {
            return Err("`responses` is empty: give at least one response".into());
        }
        for (i, response) in self.responses.iter().enumerate() {
            if response.text.is_empty()
                && response.tool_calls.is_empty()
                && response.error.is_none()
            {
                return Err(format!(
                    "`responses[{i}]` is empty: give it `text`, `tool_calls` or both"
                ));
            }
            for (j, call) in response.tool_calls.iter().enumerate() {
                if call.name.trim().is_empty() {
                    return Err(format!("`responses[{i}].tool_calls[{j}].name` is empty"));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn arguments_may_be_objects_or_raw_text() {
        let script = ReplayScript::parse(
            r#"{"responses": [{"tool_calls": [
                {"name": "a", "arguments": {"x": 1}},
                {"name": "b", "arguments": "{not json"},
                {"name": "c"}
            ]}]}"#,
        )
        .unwrap();
        let texts: Vec<String> = script.responses[0]
            .tool_calls
            .iter()
            .map(|call| call.arguments.to_text())
            .collect();
        assert_eq!(texts, [r#"{"x":1}"#, "{not json", "{}"]);
    }

    #[test]
    fn errors_name_the_place() {
        let typo = ReplayScript::parse("{\"responses\": [\n  {\"txet\": \"hi\"}\n]}").unwrap_err();
        assert!(typo.contains("line 2") && typo.contains("txet"), "{typo}");
        let wrong_type =
            ReplayScript::parse(r#"{"responses": [{"text": "hi", "delay_ms": "soon"}]}"#)
                .unwrap_err();
        assert!(wrong_type.contains("responses[0].delay_ms"), "{wrong_type}");
        let syntax = ReplayScript::parse("{\"responses\": [\n").unwrap_err();
        assert!(syntax.contains("line 2"), "{syntax}");
        let empty = ReplayScript::parse(r#"{"responses": [{"delay_ms": 5}]}"#).unwrap_err();
        assert!(empty.contains("responses[0]"), "{empty}");
        let no_name =
            ReplayScript::parse(r#"{"responses": [{"tool_calls": [{"name": ""}]}]}"#).unwrap_err();
        assert!(no_name.contains("tool_calls[0].name"), "{no_name}");
    }
}
