//! The JSON envelope every tool call answers with, whatever happened inside it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The result the model reads. Success carries a summary (and the artifact when one was made);
/// failure carries an error text. Field order on the wire is fixed by this struct.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Envelope {
    /// Whether the call did what it was asked.
    pub success: bool,
    /// What the call did, for the model.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub summary: Option<String>,
    /// The artifact the call stored: `{artifact_type, title, payload}`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub artifact: Option<Value>,
    /// The stored artifact's id, for `get_artifact` later.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub artifact_id: Option<i64>,
    /// Why the call failed; nothing was written when this is set.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
}

impl Envelope {
    /// A successful call without an artifact.
    pub fn ok(summary: impl Into<String>) -> Self {
        Self {
            success: true,
            summary: Some(summary.into()),
            artifact: None,
            artifact_id: None,
            error: None,
        }
    }

    /// A failed call; the runtime guarantees nothing was written.
    pub fn failure(error: impl Into<String>) -> Self {
        Self {
            success: false,
            summary: None,
            artifact: None,
            artifact_id: None,
            error: Some(error.into()),
        }
    }

    /// Whether the call succeeded without changing anything ("nothing changed: …"): an
    /// answer the model must not take for a change made.
    pub fn changed_nothing(&self) -> bool {
        self.success
            && self
                .summary
                .as_deref()
                .is_some_and(|summary| summary.starts_with(super::NOTHING_CHANGED))
    }

    /// The envelope as the JSON string handed to the model.
    pub fn to_json_string(&self) -> String {
        // Serializing a struct of strings, numbers and JSON values cannot fail.
        serde_json::to_string(self).unwrap_or_else(|_| String::from(r#"{"success":false}"#))
    }

    /// The envelope as a JSON value, for HTTP bodies and event payloads.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}
