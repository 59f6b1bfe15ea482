//! What of a tool's result reaches the model: its text, cut to a budget (the cut said), and a
//! one-line summary of anything else (images, audio, embedded resources, links), since the
//! model reads text only and a large payload would crowd the conversation out of its context.
//!
//! The result is read as the JSON the server sent (`content`, `structuredContent`,
//! `isError`), so content kinds this version does not know are summarised too rather than
//! lost.

use rmcp::model::CallToolResult;
use serde_json::Value;

/// Characters of a result's text the model gets; the rest is cut, and the cut said.
pub const RESULT_CHARS: usize = 16_000;

/// A result as the model reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallOutcome {
    /// The text the model reads.
    pub text: String,
    /// The server marked the result as an error (`isError`).
    pub is_error: bool,
}

/// Renders `result` within `budget` characters of text.
pub fn render(result: &CallToolResult, budget: usize) -> CallOutcome {
    let is_error = result.is_error == Some(true);
    let value = serde_json::to_value(result).unwrap_or(Value::Null);
    let mut parts: Vec<String> = Vec::new();
    if let Some(Value::Array(blocks)) = value.get("content") {
        for block in blocks {
            parts.push(describe_block(block));
        }
    }
    // Structured content usually repeats the text; it is only the answer when there is none.
    if parts.iter().all(|p| p.trim().is_empty())
        && let Some(structured) = value.get("structuredContent")
        && !structured.is_null()
    {
        parts = vec![structured.to_string()];
    }
    let mut text = parts.join("\n");
    if text.trim().is_empty() {
        text = if is_error {
            "the tool reported an error without saying what".to_string()
        } else {
            "the tool returned nothing".to_string()
        };
    }
    CallOutcome {
        text: cut(text, budget),
        is_error,
    }
}

/// One content block as text: text as it is, anything else summarised.
fn describe_block(block: &Value) -> String {
    let kind = block
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    let str_of = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or("");
    match kind {
        "text" => str_of("text").to_string(),
        "image" | "audio" => format!(
            "[{kind} content ({}, about {} bytes), not shown]",
            or_unknown(str_of("mimeType")),
            base64_bytes(str_of("data"))
        ),
        "resource" => {
            let resource = block.get("resource").cloned().unwrap_or(Value::Null);
            let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("?");
            match resource.get("text").and_then(Value::as_str) {
                Some(text) => format!("[resource {uri}]\n{text}"),
                None => format!(
                    "[resource {uri} ({}), binary, not shown]",
                    or_unknown(
                        resource
                            .get("mimeType")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                    )
                ),
            }
        }
        "resource_link" => format!("[link to resource {} ({})]", str_of("uri"), str_of("name")),
        other => format!("[{other} content, not shown]"),
    }
}

fn or_unknown(s: &str) -> &str {
    if s.is_empty() { "unknown type" } else { s }
}

/// Bytes a base64 text decodes to, roughly.
fn base64_bytes(data: &str) -> usize {
    data.len() / 4 * 3
}

/// `text` cut to `budget` characters, saying how much was left out.
fn cut(text: String, budget: usize) -> String {
    let total = text.chars().count();
    if total <= budget {
        return text;
    }
    let kept: String = text.chars().take(budget).collect();
    format!("{kept}\n[cut: the result was {total} characters; only the first {budget} are shown]")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(json: Value) -> CallToolResult {
        serde_json::from_value(json).unwrap_or_default()
    }

    #[test]
    fn text_is_kept_and_other_content_summarised() {
        let out = render(
            &result(serde_json::json!({"content": [
                {"type": "text", "text": "It is 21 °C."},
                {"type": "image", "data": "aGVsbG8gd29ybGQh", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "alpha"}},
                {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAA", "mimeType": "application/octet-stream"}}
            ]})),
            1_000,
        );
        assert!(!out.is_error);
        assert!(
            out.text
                .starts_with("It is 21 °C.\n[image content (image/png"),
            "{}",
            out.text
        );
        assert!(out.text.contains("[resource file:///a.txt]\nalpha"));
        assert!(
            out.text
                .contains("file:///b.bin (application/octet-stream), binary")
        );
    }

    #[test]
    fn long_text_is_cut_and_says_so() {
        let out = render(
            &result(serde_json::json!({"content": [{"type": "text", "text": "é".repeat(50)}]})),
            10,
        );
        assert!(out.text.starts_with(&"é".repeat(10)));
        assert!(
            out.text
                .contains("[cut: the result was 50 characters; only the first 10")
        );
    }

    #[test]
    fn errors_and_empty_results_say_something() {
        let out = render(
            &result(serde_json::json!({"content": [], "isError": true})),
            100,
        );
        assert!(out.is_error);
        assert!(!out.text.is_empty());
        let out = render(
            &result(serde_json::json!({"content": [], "structuredContent": {"a": 1}})),
            100,
        );
        assert_eq!(out.text, r#"{"a":1}"#);
    }
}
