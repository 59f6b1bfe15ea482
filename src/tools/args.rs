//! Turning the model's JSON arguments into a tool's typed argument struct, with errors that name
//! the offending field and say what is wrong, so the model can correct its next call.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::output::ToolError;

/// Deserializes `args` (already stripped of `action_and_reasoning`) into `A`.
pub fn parse_args<A: DeserializeOwned>(args: Value) -> Result<A, ToolError> {
    serde_path_to_error::deserialize::<_, A>(args).map_err(|err| {
        let path = err.path().to_string();
        let reason = tidy_reason(&err.inner().to_string());
        if path == "." {
            ToolError::invalid(reason)
        } else {
            ToolError::invalid(format!("`{path}`: {reason}"))
        }
    })
}

/// Checks that a tool without inputs received none besides `action_and_reasoning`.
pub fn parse_no_args(args: Value) -> Result<(), ToolError> {
    match args {
        Value::Object(map) if map.is_empty() => Ok(()),
        Value::Object(map) => {
            let names: Vec<String> = map.keys().map(|k| format!("`{k}`")).collect();
            Err(ToolError::invalid(format!(
                "this tool takes no arguments besides `action_and_reasoning`; remove {}",
                names.join(", ")
            )))
        }
        Value::Null => Ok(()),
        other => Err(ToolError::invalid(format!(
            "arguments must be a JSON object, got {}",
            json_kind(&other)
        ))),
    }
}

/// A short name for the JSON type of a value, for error messages.
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// serde's messages end with "at line L column C", which means nothing for a JSON value that
/// never was text; drop it.
fn tidy_reason(reason: &str) -> String {
    match reason.find(" at line ") {
        Some(at) => reason[..at].to_string(),
        None => reason.to_string(),
    }
}
