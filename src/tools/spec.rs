//! The LLM-facing description of a tool: name, description and a JSON Schema for its
//! arguments, with the runtime's `action_and_reasoning` argument injected.
//!
//! The tool list is sent with every model request, and a small model reads all of it, so the
//! schemas are kept plain ([`plain`]): an enum is an `enum` list, an optional field is simply
//! not required (no `null` in its type), no `format` tags, no descriptions of list items that
//! their list already describes. llama.cpp turns the schemas into a grammar that constrains
//! what the model writes, so every text and list carries the bound the workspace enforces
//! (`maxLength`, `maxItems`, `minimum`…, from the workspace's constants through schemars
//! attributes), which closes a runaway string; no bound reaches [`MAX_SCHEMA_BOUND`].

use schemars::{JsonSchema, Schema, generate::SchemaSettings, transform::RecursiveTransform};
use serde::Serialize;
use serde_json::{Map, Value, json};

/// The argument every tool call must carry: one plain sentence on what the agent does and why.
pub const ACTION_AND_REASONING: &str = "action_and_reasoning";

/// The longest `action_and_reasoning`, in characters: one sentence, not a paragraph.
pub const MAX_REASON_CHARS: usize = 500;

/// The largest bound a schema carries. llama.cpp's grammar spells a string of at most N
/// characters as N nested rules and stops at 2,000 (some builds refuse the whole grammar, and
/// so every request with tools, others drop the bound), so a limit from there on is given to
/// the model as this. The document's own texts, whose limit is millions of characters, carry
/// no bound at all: the workspace enforces theirs.
pub const MAX_SCHEMA_BOUND: usize = 1_999;

/// The bound a schema gives for a workspace limit: the limit itself, or [`MAX_SCHEMA_BOUND`]
/// when it is larger.
pub const fn schema_bound(limit: usize) -> usize {
    if limit < MAX_SCHEMA_BOUND {
        limit
    } else {
        MAX_SCHEMA_BOUND
    }
}

const ACTION_AND_REASONING_DOC: &str =
    "One short, plain sentence for the person: what you are doing and why.";

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
        let settings = SchemaSettings::draft2020_12()
            .with(|s| {
                s.inline_subschemas = true;
            })
            .with_transform(RecursiveTransform(plain as fn(&mut Schema)));
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

/// Makes one (sub)schema plain for a small model and a grammar: drops `format` tags and `null`
/// (from a type list, an enum, an `anyOf`/`oneOf`, a `null` default: an optional field is just
/// not required), turns a `oneOf` of constants into an `enum`, and drops the description of a
/// list's items (their struct's doc, written for Rust; the list's own description stays).
fn plain(schema: &mut Schema) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    map.remove("format");
    if map.get("default").is_some_and(Value::is_null) {
        map.remove("default");
    }
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|kind| kind != "null");
        if let [only] = types.as_slice() {
            let only = only.clone();
            map.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.retain(|value| !value.is_null());
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(options)) = map.get_mut(key) else {
            continue;
        };
        options.retain(|option| option.get("type") != Some(&json!("null")));
        if options.len() == 1
            && let Some(Value::Object(only)) = options.pop()
        {
            map.remove(key);
            for (name, value) in only {
                map.entry(name).or_insert(value);
            }
        }
    }
    let constants: Option<Vec<Value>> = match map.get("oneOf") {
        Some(Value::Array(options)) => options.iter().map(|o| o.get("const").cloned()).collect(),
        _ => None,
    };
    if let Some(constants) = constants {
        map.remove("oneOf");
        if constants.iter().all(Value::is_string) {
            map.insert("type".into(), json!("string"));
        }
        map.insert("enum".into(), Value::Array(constants));
    }
    if let Some(Value::Object(items)) = map.get_mut("items") {
        items.remove("description");
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
            json!({
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_REASON_CHARS,
                "description": ACTION_AND_REASONING_DOC,
            }),
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
