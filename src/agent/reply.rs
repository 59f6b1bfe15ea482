//! The reply as a tool call (`HAICO_LLM_AIDS=reply-tool`): the model answers the person by
//! calling [`NAME`], and every request requires a tool call.
//!
//! A small model that may answer either in prose or with a call mixes the two: it writes the
//! workspace out as prose instead of changing it, or, done with the request, calls its last
//! write again because a call is what it knows how to write. When every answer is a call, the
//! server's grammar (llama.cpp turns `tool_choice: required` into one) keeps each answer a
//! well-formed call, and ending the turn is one more call with an obvious name. The tool list
//! and the choice are the same in every request of a configuration, so a prompt cache keeps
//! them.

use serde_json::{Value, json};

use super::model::{ToolCallRequest, ToolDefinition};

/// The reply tool's name: not a workspace tool's, nor one a person would give an MCP tool.
pub const NAME: &str = "reply_to_user";

/// Longest reply the schema allows: below llama.cpp's grammar limit on repetitions, and far
/// beyond the sentence or two a reply should be.
const MAX_CHARS: u64 = 1_999;

/// What the instructions add when the reply is a tool.
pub const INSTRUCTIONS: &str = "

Every answer of yours is a tool call. To reply to the user (the request is done, you answer a \
question, or you need to ask one), call reply_to_user with your reply as message; it ends your \
turn. In the examples below, \"you answer\" means calling reply_to_user.";

/// The note sent back when a change request's first answer is a reply that changed nothing.
pub const ACT_NOTE: &str = "not sent: the request asks for changes to the workspace and none \
was made yet. Make them now with the workspace tools, then call reply_to_user.";

/// The note sent back when a reply came with calls that failed.
pub const AFTER_FAILURE_NOTE: &str = "not sent: a call before it in the same answer failed. \
Fix that call or tell the user about it, then call reply_to_user again.";

/// The tool the model replies with.
pub fn definition() -> ToolDefinition {
    ToolDefinition {
        name: NAME.to_string(),
        description: "Reply to the user and end your turn: say in one or two sentences what you \
                      changed, answer their question, or ask yours."
            .to_string(),
        parameters: json!({
            "type": "object",
            "properties": {
                "message": {
                    "type": "string",
                    "description": "Your reply, in plain words.",
                    "minLength": 1,
                    "maxLength": MAX_CHARS,
                }
            },
            "required": ["message"],
            "additionalProperties": false,
        }),
    }
}

/// Whether `call` is the reply.
pub fn is_reply(call: &ToolCallRequest) -> bool {
    call.name == NAME
}

/// The reply's message, or why the call cannot be sent (as the failure the model is told).
pub fn message(call: &ToolCallRequest) -> Result<String, String> {
    let Ok(arguments) = serde_json::from_str::<Value>(&call.arguments) else {
        return Err(
            "invalid arguments: not a JSON object: give {\"message\": \"your reply\"}".to_string(),
        );
    };
    let message = match &arguments {
        Value::Object(map) => map.get("message"),
        _ => None,
    };
    match message {
        Some(Value::String(text)) if !text.trim().is_empty() => Ok(text.trim().to_string()),
        Some(Value::String(_)) => Err("invalid arguments: `message` is empty: write the \
                                       reply to the user in it"
            .to_string()),
        Some(_) => Err("invalid arguments: `message` must be a string".to_string()),
        None => Err(
            "invalid arguments: `message` is missing: write the reply to the user \
                     in it"
                .to_string(),
        ),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn call(arguments: Value) -> ToolCallRequest {
        ToolCallRequest {
            id: "c1".into(),
            name: NAME.into(),
            arguments: arguments.to_string(),
        }
    }

    #[test]
    fn the_message_is_taken_trimmed_and_a_missing_one_is_named() {
        assert_eq!(
            message(&call(json!({"message": "  Done.  "}))).unwrap(),
            "Done."
        );
        assert!(message(&call(json!({}))).unwrap_err().contains("missing"));
        assert!(
            message(&call(json!({"message": " "})))
                .unwrap_err()
                .contains("empty")
        );
        assert!(
            message(&call(json!({"message": 3})))
                .unwrap_err()
                .contains("string")
        );
        assert!(message(&call(json!("Done."))).is_err());
        let cut_off = ToolCallRequest {
            id: "c2".into(),
            name: NAME.into(),
            arguments: "{\"message\": \"Don".into(),
        };
        assert!(message(&cut_off).unwrap_err().contains("JSON"));
    }

    #[test]
    fn the_definition_bounds_the_message() {
        let tool = definition();
        assert_eq!(tool.name, NAME);
        assert_eq!(tool.parameters["properties"]["message"]["maxLength"], 1_999);
        assert_eq!(tool.parameters["required"], json!(["message"]));
    }
}
