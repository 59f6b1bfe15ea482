//! Tool calls a model wrote as text. Many local models (and llama.cpp with a model's stock chat
//! template) answer with a ```json block `{"name": …, "arguments": …}` or `<tool_call>` tags
//! instead of the API's `tool_calls`; when the whole answer is such calls, naming tools that
//! were offered, the agent takes them as calls (`HAICO_LLM_TEXT_TOOL_CALLS=auto`).
//!
//! Only an answer that is nothing but calls counts: prose that mentions JSON stays prose.

use serde_json::Value;

use super::model::ToolCallRequest;

/// Whether text answers are read as tool calls (`HAICO_LLM_TEXT_TOOL_CALLS`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum TextToolCalls {
    /// Read them when the answer is only calls to offered tools.
    #[default]
    Auto,
    /// Never: text is always the answer.
    Off,
}

impl std::str::FromStr for TextToolCalls {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "off" => Ok(Self::Off),
            other => Err(format!(
                "`{other}` is not a text tool call mode: use auto or off"
            )),
        }
    }
}

/// How a written call can begin; text that could still become one of these is held back from
/// the live token stream until it is clear whether it is a call.
const OPENINGS: [&str; 3] = ["```", "<tool_call>", "{"];

/// Whether `text` (the answer so far) may still turn out to be a written tool call.
pub fn may_be_call(text: &str) -> bool {
    let text = text.trim_start();
    OPENINGS
        .iter()
        .any(|opening| text.starts_with(opening) || opening.starts_with(text))
}

/// The calls `text` consists of, when it is nothing but calls (fenced blocks, `<tool_call>`
/// elements or one bare JSON object) each naming a tool in `offered`; `None` otherwise. Calls
/// get ids `text_call_<turn call number>` from `next_id` on.
pub fn parse(text: &str, offered: &[&str], next_id: usize) -> Option<Vec<ToolCallRequest>> {
    let mut rest = text.trim();
    let mut calls = Vec::new();
    while !rest.is_empty() {
        let (body, after) = next_block(rest)?;
        let (name, arguments) = call_of(body)?;
        if !offered.contains(&name.as_str()) {
            return None;
        }
        calls.push(ToolCallRequest {
            id: format!("text_call_{}", next_id + calls.len()),
            name,
            arguments,
        });
        rest = after.trim_start();
    }
    (!calls.is_empty()).then_some(calls)
}

/// The first block of `text` (which starts with it) and what follows it.
fn next_block(text: &str) -> Option<(&str, &str)> {
    if let Some(fenced) = text.strip_prefix("```") {
        // The language tag (json, tool_call, or none) runs to the end of the line.
        let body_start = fenced.find('\n')?;
        let tag = fenced[..body_start].trim();
        if !tag.is_empty() && !tag.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        let body = &fenced[body_start + 1..];
        let end = body.find("```")?;
        return Some((&body[..end], &body[end + 3..]));
    }
    if let Some(tagged) = text.strip_prefix("<tool_call>") {
        let end = tagged.find("</tool_call>")?;
        return Some((&tagged[..end], &tagged[end + "</tool_call>".len()..]));
    }
    if text.starts_with('{') {
        // One bare object: it must be all that is left.
        return Some((text, ""));
    }
    None
}

/// `(name, arguments as JSON text)` of one call object; `arguments` (or `parameters`) may be an
/// object or a string holding one.
fn call_of(body: &str) -> Option<(String, String)> {
    let Value::Object(mut object) = serde_json::from_str::<Value>(body.trim()).ok()? else {
        return None;
    };
    let Some(Value::String(name)) = object.remove("name") else {
        return None;
    };
    let arguments = object
        .remove("arguments")
        .or_else(|| object.remove("parameters"))
        .unwrap_or(Value::Object(serde_json::Map::new()));
    let arguments = match arguments {
        Value::Object(_) => arguments.to_string(),
        Value::String(text) => text,
        _ => return None,
    };
    Some((name, arguments))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OFFERED: &[&str] = &["add_todos", "set_objective"];

    fn names(calls: &[ToolCallRequest]) -> Vec<&str> {
        calls.iter().map(|c| c.name.as_str()).collect()
    }

    #[test]
    fn a_fenced_json_block_is_a_call() {
        let text = "```json\n{\"name\": \"set_objective\", \"arguments\": {\"objective\": \"Go\", \
                    \"action_and_reasoning\": \"r\"}}\n```";
        let calls = parse(text, OFFERED, 1).unwrap_or_default();
        assert_eq!(names(&calls), ["set_objective"]);
        assert_eq!(calls[0].id, "text_call_1");
        let args: Value = serde_json::from_str(&calls[0].arguments).unwrap_or(Value::Null);
        assert_eq!(args["objective"], "Go");
    }

    #[test]
    fn several_blocks_and_tool_call_tags_are_several_calls() {
        let text = "<tool_call>\n{\"name\": \"add_todos\", \"arguments\": \"{\\\"steps\\\": []}\"}\n\
                    </tool_call>\n```\n{\"name\": \"set_objective\", \"parameters\": {}}\n```\n";
        let calls = parse(text, OFFERED, 4).unwrap_or_default();
        assert_eq!(names(&calls), ["add_todos", "set_objective"]);
        assert_eq!(calls[0].arguments, "{\"steps\": []}");
        assert_eq!(calls[1].id, "text_call_5");
    }

    #[test]
    fn prose_unknown_tools_and_mixed_answers_stay_text() {
        for text in [
            "Sure! Here is the plan.",
            "```json\n{\"name\": \"delete_everything\", \"arguments\": {}}\n```",
            "I will call this:\n```json\n{\"name\": \"add_todos\", \"arguments\": {}}\n```",
            "```json\n{\"name\": \"add_todos\", \"arguments\": {}}\n``` and then I am done",
            "```python\nprint(1)\n```",
            "{\"name\": \"add_todos\", \"arguments\": [1]}",
            "```json\n{\"name\": \"add_todos\"",
        ] {
            assert!(parse(text, OFFERED, 1).is_none(), "{text}");
        }
    }

    #[test]
    fn openings_are_held_back_and_prose_is_not() {
        for text in ["", "  `", "``", "```js", "<tool", "<tool_call>{", " {\"na"] {
            assert!(may_be_call(text), "{text:?}");
        }
        for text in ["Sure", "<b>", "I will"] {
            assert!(!may_be_call(text), "{text:?}");
        }
    }
}
