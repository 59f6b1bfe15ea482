//! The LLM-facing description of a tool: name, description and a JSON Schema for its
//! arguments, with the runtime's `action_and_reasoning` argument injected.

use schemars::{JsonSchema, generate::SchemaSettings};
use serde::Serialize;
use serde_json::{Map, Value, json};

/// The argument every tool call must carry: one plain sentence on what the agent does and why.
pub const ACTION_AND_REASONING: &str = "action_and_reasoning";

const ACTION_AND_REASONING_DOC: &str = "One short, plain-language sentence for the person you work \
with: what you are doing with this call and why. No technical jargon.";

/// One tool as the model sees it. Built once per process and shared by every thread.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct ToolSpec {
    /// The name the model calls the tool by.
    pub name: &'static str,
    /// What the tool does and when to use it, written for the model.
    pub description: &'static str,
    /// JSON Schema of the arguments, `action_and_reasoning` included.
    pub parameters: Value,
}

impl ToolSpec {
    /// Builds the spec of a tool whose arguments deserialize into `A`.
    pub fn for_args<A: JsonSchema>(name: &'static str, description: &'static str) -> Self {
        let settings = SchemaSettings::draft2020_12().with(|s| {
            s.inline_subschemas = true;
        });
        let schema = settings.into_generator().into_root_schema_for::<A>();
        Self::finish(name, description, schema.to_value())
    }

    /// Builds the spec of a tool that takes no arguments besides `action_and_reasoning`.
    pub fn without_args(name: &'static str, description: &'static str) -> Self {
        Self::finish(
            name,
            description,
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        )
    }

    fn finish(name: &'static str, description: &'static str, schema: Value) -> Self {
        Self {
            name,
            description,
            parameters: with_action_and_reasoning(schema),
        }
    }
}

/// Doc comments arrive with their source line breaks; rejoin wrapped lines so the model reads
/// plain sentences (blank lines, i.e. paragraphs, stay).
fn unwrap_doc_lines(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map.iter_mut() {
                match inner {
                    Value::String(text) if key == "description" => {
                        *text = text
                            .split("\n\n")
                            .map(|para| {
                                para.split('\n')
                                    .map(str::trim)
                                    .collect::<Vec<_>>()
                                    .join(" ")
                            })
                            .collect::<Vec<_>>()
                            .join("\n\n");
                    }
                    other => unwrap_doc_lines(other),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(unwrap_doc_lines),
        _ => {}
    }
}

/// Makes `root` an object schema with the required `action_and_reasoning` string (once, even
/// when the schema already asks for it): haico's tools and other servers' tools alike.
pub fn require_reason(root: &mut Map<String, Value>) {
    root.insert("type".into(), Value::String("object".into()));
    let properties = root
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(props) = properties {
        props.insert(
            ACTION_AND_REASONING.into(),
            json!({"type": "string", "minLength": 1, "description": ACTION_AND_REASONING_DOC}),
        );
    }
    let required = root
        .entry("required")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(list) = required
        && !list.iter().any(|item| item == ACTION_AND_REASONING)
    {
        list.push(Value::String(ACTION_AND_REASONING.into()));
    }
}

/// Adds the required `action_and_reasoning` string to an object schema and drops the keys
/// providers do not want at the root (`$schema`, `title`).
fn with_action_and_reasoning(schema: Value) -> Value {
    let mut root = match schema {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    root.remove("$schema");
    root.remove("title");
    // The struct's own doc ("Arguments of …") says nothing the tool description does not.
    root.remove("description");
    for value in root.values_mut() {
        unwrap_doc_lines(value);
    }
    require_reason(&mut root);
    Value::Object(root)
}
