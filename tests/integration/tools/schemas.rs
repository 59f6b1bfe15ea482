//! The tool list as a small model and llama.cpp's grammar read it: every text and list
//! bounded (and below the grammar's ceiling), required texts and batches not empty, 1-based
//! numbers at least 1, plain shapes (no `oneOf`, `const`, `format`, `null`, `$ref`), the same
//! bytes every time, and its size (printed; bounded so that growth is a decision).
//!
//! `cargo test --test integration -- tools::schemas --nocapture` prints the size.

use haico::tools::{
    MAX_REASON_CHARS, MAX_SCHEMA_BOUND, ToolSpec, charts::ChartGeneratorArgs, tool_specs,
};
use serde_json::{Value, json};

/// The document's own texts, whose limit (millions of characters) no grammar can carry: the
/// workspace enforces it. Every other string is bounded.
const DOCUMENT_TEXTS: [&str; 4] = [
    "update_document.content",
    "append_to_document.text",
    "edit_document.edits[].old_text",
    "edit_document.edits[].new_text",
];

/// Required strings that may be empty.
const MAY_BE_EMPTY: [&str; 3] = [
    "update_document.content",
    "edit_document.edits[].new_text",
    "chart_generator.data.labels[]",
];

/// Optional strings that, when given, must not be empty.
const NOT_EMPTY_WHEN_GIVEN: [&str; 1] = ["update_preferences.updates[].title"];

/// Lists that may be empty.
const MAY_BE_EMPTY_LISTS: [&str; 1] = ["chart_generator.style.colors"];

/// The integers that are 1-based numbers or ids.
const COUNTED_FROM_ONE: [&str; 8] = [
    "add_todos.parent_index",
    "toggle_todos.indices[]",
    "update_todos.updates[].index",
    "remove_todos.indices[]",
    "update_preferences.updates[].index",
    "remove_preferences.indices[]",
    "list_artifacts.limit",
    "get_artifact.artifact_id",
];

/// One (sub)schema of a tool's arguments, named by its path (`edit_document.edits[].old_text`)
/// and whether its object requires it.
struct Node<'a> {
    path: String,
    schema: &'a Value,
    required: bool,
}

/// Every property and list item under `schema`, depth first.
fn nodes<'a>(path: &str, schema: &'a Value, required: bool, out: &mut Vec<Node<'a>>) {
    out.push(Node {
        path: path.to_string(),
        schema,
        required,
    });
    if let Some(props) = schema["properties"].as_object() {
        let needed: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, sub) in props {
            nodes(
                &format!("{path}.{name}"),
                sub,
                needed.contains(&name.as_str()),
                out,
            );
        }
    }
    if schema["items"].is_object() {
        nodes(&format!("{path}[]"), &schema["items"], true, out);
    }
}

fn all_nodes() -> Vec<Node<'static>> {
    let mut out = Vec::new();
    for spec in tool_specs() {
        nodes(spec.name, &spec.parameters, true, &mut out);
    }
    out
}

#[test]
fn every_text_and_list_is_bounded_below_the_grammar_ceiling() {
    let mut strings = 0;
    for node in all_nodes() {
        let (path, schema) = (node.path.as_str(), node.schema);
        match schema["type"].as_str() {
            // An enum is no free text: its values bound it.
            Some("string") if schema.get("enum").is_some() => {}
            Some("string") => {
                strings += 1;
                if DOCUMENT_TEXTS.contains(&path) {
                    assert!(schema.get("maxLength").is_none(), "{path}: {schema}");
                } else {
                    let max = schema["maxLength"].as_u64();
                    assert!(max.is_some(), "{path} has no maxLength: {schema}");
                    assert!(max <= Some(MAX_SCHEMA_BOUND as u64), "{path}: {schema}");
                }
                let text_needed = node.required && !MAY_BE_EMPTY.contains(&path);
                if text_needed || NOT_EMPTY_WHEN_GIVEN.contains(&path) {
                    assert_eq!(schema["minLength"], json!(1), "{path}: {schema}");
                }
            }
            Some("array") => {
                let max = schema["maxItems"].as_u64();
                assert!(max.is_some(), "{path} has no maxItems: {schema}");
                assert!(max <= Some(MAX_SCHEMA_BOUND as u64), "{path}: {schema}");
                if !MAY_BE_EMPTY_LISTS.contains(&path) {
                    assert_eq!(
                        schema["minItems"],
                        json!(1),
                        "{path} may be empty: {schema}"
                    );
                }
            }
            Some("integer") if COUNTED_FROM_ONE.contains(&path) => {
                assert_eq!(schema["minimum"], json!(1), "{path}: {schema}");
            }
            Some(_) => {}
            None => panic!("{path} has no single type: {schema}"),
        }
    }
    assert!(
        strings > 30,
        "{strings} strings found: the walk missed some"
    );
    // Every tool's sentence for the person is bounded like the runtime bounds it.
    for spec in tool_specs() {
        let reason = &spec.parameters["properties"]["action_and_reasoning"];
        assert_eq!(
            reason["maxLength"],
            json!(MAX_REASON_CHARS),
            "{}",
            spec.name
        );
    }
}

#[test]
fn shapes_are_plain_for_small_models() {
    for spec in tool_specs() {
        let text = spec.parameters.to_string();
        for noise in [
            "oneOf",
            "anyOf",
            "allOf",
            "\"const\"",
            "\"format\"",
            "null",
            "$ref",
            "$defs",
        ] {
            assert!(!text.contains(noise), "{}: {noise} in {text}", spec.name);
        }
        // A tool's description is one sentence or two, not a paragraph.
        assert!(
            spec.description.len() <= 160,
            "{}: {}",
            spec.name,
            spec.description
        );
    }
    let node = |path: &str| {
        all_nodes()
            .into_iter()
            .find(|n| n.path == path)
            .map(|n| n.schema.clone())
            .unwrap_or_else(|| panic!("no {path}"))
    };
    assert_eq!(
        node("chart_generator.chart_type")["enum"],
        json!(["line", "bar", "pie"])
    );
    assert_eq!(
        node("add_preferences.items[].kind")["enum"],
        json!(["hard", "soft"])
    );
    assert_eq!(
        node("add_preferences.items[].kind")["default"],
        json!("soft")
    );
    assert_eq!(
        node("update_preferences.updates[].kind")["enum"],
        json!(["hard", "soft"])
    );
    assert_eq!(
        node("add_todos.steps[].depth")["maximum"],
        json!(haico::workspace::MAX_DEPTH)
    );
    let replace_all = node("update_document.replace_all");
    assert_eq!(
        (replace_all["type"].clone(), replace_all["default"].clone()),
        (json!("boolean"), json!(false))
    );
    // Optional fields are just not required.
    assert_eq!(node("update_document.title")["type"], json!("string"));
    assert_eq!(node("chart_generator.style")["type"], json!("object"));
}

#[test]
fn the_tool_list_is_the_same_bytes_every_time_and_small() {
    let once = ToolSpec::for_args::<ChartGeneratorArgs>("chart", "A chart.");
    let again = ToolSpec::for_args::<ChartGeneratorArgs>("chart", "A chart.");
    assert_eq!(
        serde_json::to_string(&once).unwrap(),
        serde_json::to_string(&again).unwrap()
    );
    let list = serde_json::to_string(&tool_specs()).unwrap();
    assert_eq!(list, serde_json::to_string(&tool_specs()).unwrap());
    let bytes = list.len();
    println!("tool list: {bytes} bytes, about {} tokens", bytes / 4);
    // 15,664 bytes before the schemas were made plain, 12,309 after (docs/ARCHITECTURE.md).
    assert!(
        bytes <= 12_500,
        "the tool list grew to {bytes} bytes: a decision, not a drift"
    );
}
