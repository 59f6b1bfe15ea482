//! The arguments as the model sent them: `action_and_reasoning` taken out and checked, and
//! what is refused before a body runs (not an object, a NUL character).

use serde_json::Value;

use crate::{
    tools::args::json_kind, tools::spec::ACTION_AND_REASONING, tools::spec::MAX_REASON_CHARS,
};
use haico_core::workspace::rules::char_count;

/// Takes `action_and_reasoning` out of the arguments; it must be a non-empty string of at most
/// [`MAX_REASON_CHARS`] characters. On failure the error comes with the arguments as sent (an
/// empty sentence left out), for the record.
pub fn split_action_and_reasoning(args: Value) -> Result<(String, Value), (String, Value)> {
    let mut map = match args {
        Value::Object(map) => map,
        other => {
            let message = format!("arguments must be a JSON object, got {}", json_kind(&other));
            return Err((message, other));
        }
    };
    if let Some(path) = haico_core::workspace::rules::find_nul_in_object(&map) {
        let message = haico_core::workspace::rules::nul_in(&path).to_string();
        return Err((message, Value::Object(map)));
    }
    let message = match map.remove(ACTION_AND_REASONING) {
        Some(Value::String(text)) if char_count(text.trim()) > MAX_REASON_CHARS => {
            let message = format!(
                "`{ACTION_AND_REASONING}` is {} characters long; say what you are doing and why \
                 in one short sentence (at most {MAX_REASON_CHARS} characters)",
                char_count(text.trim())
            );
            map.insert(ACTION_AND_REASONING.to_string(), Value::String(text));
            message
        }
        Some(Value::String(text)) if !text.trim().is_empty() => {
            return Ok((text.trim().to_string(), Value::Object(map)));
        }
        Some(Value::String(_)) => format!(
            "`{ACTION_AND_REASONING}` is empty: say in one plain sentence what you are doing and why"
        ),
        Some(other) => {
            let message = format!(
                "`{ACTION_AND_REASONING}` must be a string, got {}",
                json_kind(&other)
            );
            map.insert(ACTION_AND_REASONING.to_string(), other);
            message
        }
        None => format!(
            "missing required argument `{ACTION_AND_REASONING}`: add one short, plain sentence \
             saying what you are doing and why"
        ),
    };
    Err((message, Value::Object(map)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn action_and_reasoning_is_required_and_stripped() {
        let (why, rest) =
            split_action_and_reasoning(json!({"action_and_reasoning": " Tidy up. ", "x": 1}))
                .unwrap_or_default();
        assert_eq!(why, "Tidy up.");
        assert_eq!(rest, json!({"x": 1}));
        assert!(split_action_and_reasoning(json!({"x": 1})).is_err());
        assert!(split_action_and_reasoning(json!({"action_and_reasoning": ""})).is_err());
        assert!(split_action_and_reasoning(json!({"action_and_reasoning": 3})).is_err());
        assert!(split_action_and_reasoning(json!([1])).is_err());
        let longest = "a".repeat(MAX_REASON_CHARS);
        assert!(split_action_and_reasoning(json!({"action_and_reasoning": longest})).is_ok());
        let (message, kept) = split_action_and_reasoning(
            json!({"action_and_reasoning": format!(" {longest}b "), "x": 1}),
        )
        .err()
        .unwrap_or_default();
        assert!(
            message.starts_with("`action_and_reasoning` is 501 characters long"),
            "{message}"
        );
        assert_eq!(kept["x"], json!(1));
        assert!(
            kept["action_and_reasoning"].is_string(),
            "kept for the record"
        );
    }
}
