//! The tool runtime: rollback on failure and panic, unknown threads and tools, the `ToolCall`
//! record, and the LLM-facing schemas of the 16 tools.

use crate::common;

use common::{Harness, tid};
use haico::{
    ThreadId,
    charts::{ChartData, ChartType, Series, model::ChartDraft},
    panels::Panel,
    panels::PreferenceKind,
    tools::{AnyCollection, FailureKind, ToolError, ToolResult, Toolset, build_tools, tool_specs},
    workspace::{ChangeNote, Edit, PreferenceChange, PreferenceDraft, Source, StepDraft},
};
use serde_json::{Value, json};

/// A collection that only exists in this test: every tool writes to several panels and then
/// fails in a different way.
struct TestTools;

impl TestTools {
    /// Writes to every panel of the thread.
    async fn write_everything(&self, edit: &mut Edit) -> Result<(), ToolError> {
        edit.objective()
            .set("an objective that must not survive")
            .await?;
        edit.document().append("text that must not survive").await?;
        edit.plan()
            .add_outline(
                &[StepDraft {
                    text: "a step that must not survive".into(),
                    depth: 0,
                }],
                None,
            )
            .await?;
        edit.preferences()
            .add(&[PreferenceDraft {
                title: "a preference that must not survive".into(),
                subtitle: None,
                kind: PreferenceKind::Hard,
            }])
            .await?;
        edit.artifacts()
            .add_chart(ChartDraft {
                chart_type: ChartType::Bar,
                title: "ghost".into(),
                description: None,
                data: ChartData {
                    labels: vec!["a".into()],
                    series: vec![Series {
                        name: "s".into(),
                        values: vec![1.0],
                    }],
                },
                x_axis_title: None,
                y_axis_title: None,
                style: None,
            })
            .await?;
        Ok(())
    }
}

#[haico::tools::workspace_tools]
impl TestTools {
    #[haico::tools::workspace_tool(name = "write_then_fail", description = "Writes, then fails.")]
    async fn write_then_fail(&self, edit: &mut Edit) -> ToolResult {
        edit.objective().set("should vanish").await?;
        edit.document().append("should vanish").await?;
        self.write_everything(edit).await?;
        Err(ToolError::invalid("boom"))
    }

    #[haico::tools::workspace_tool(name = "write_then_panic", description = "Writes, then panics.")]
    async fn write_then_panic(&self, edit: &mut Edit) -> ToolResult {
        self.write_everything(edit).await?;
        panic!("kaboom");
    }

    #[haico::tools::workspace_tool(
        name = "write_then_miss",
        description = "Writes, then finds nothing."
    )]
    async fn write_then_miss(&self, edit: &mut Edit) -> ToolResult {
        self.write_everything(edit).await?;
        Err(ToolError::NotFound("nothing here".into()))
    }
}

fn test_tools(thread: &ThreadId) -> Toolset {
    Toolset::new(
        thread.clone(),
        AnyCollection::into_tools(Box::new(TestTools)),
    )
}
/// `fields` plus `action_and_reasoning`.
fn args(fields: Value) -> Value {
    let mut map = match fields {
        Value::Object(map) => map,
        other => panic!("test arguments must be an object, got {other}"),
    };
    map.insert("action_and_reasoning".into(), json!("Test the runtime."));
    Value::Object(map)
}

/// The panels a call reported as changed, in display order.
fn panels(changed: haico::panels::PanelSet) -> Vec<Panel> {
    changed.iter().collect()
}

/// The 16 tools: the seeds' 15 in the order SPEC.md §2 lists them, with §11's `edit_document`
/// among the document tools.
const SPEC_ORDER: [&str; 16] = [
    "update_document",
    "append_to_document",
    "edit_document",
    "set_objective",
    "add_todos",
    "toggle_todos",
    "update_todos",
    "remove_todos",
    "list_todos",
    "add_preferences",
    "update_preferences",
    "remove_preferences",
    "list_preferences",
    "chart_generator",
    "list_artifacts",
    "get_artifact",
];

backend_tests! {
    async fn every_agent_write_marks_the_thread_active(engine) {
        let h = Harness::new(engine).await;
        h.ok("add_preferences", args(json!({"items": [{"title": "Cheap"}]}))).await;
        // What a call did to the thread's activity time, read after a pause that makes any
        // mark later than the one before it.
        let marks = |tool: &'static str, fields: Value| {
            let h = &h;
            async move {
                let before = h.state().await.thread.updated_at;
                tokio::time::sleep(std::time::Duration::from_millis(30)).await;
                let envelope = h.call(tool, args(fields)).await;
                (envelope, h.state().await.thread.updated_at > before)
            }
        };

        let (changed, marked) = marks("set_objective", json!({"objective": "Goal"})).await;
        assert!(changed.success && marked, "{changed:?}");

        // A person's edit is not the agent's work.
        let workspaces = h.runtime.workspaces().clone();
        let before = h.state().await.thread.updated_at;
        tokio::time::sleep(std::time::Duration::from_millis(30)).await;
        let mut person = workspaces.edit(&h.thread, Source::User).await.unwrap();
        let lock = PreferenceChange { locked: Some(true), ..PreferenceChange::default() };
        let id = h.workspace().await.preferences[0].id;
        person.preferences().update(id, &lock).await.unwrap();
        person.commit(ChangeNote::user("locked it")).await.unwrap();
        let after = h.state().await;
        assert!(after.workspace.preferences[0].locked);
        assert_eq!(after.thread.updated_at, before, "a person's edit marked the thread");

        // An agent call that changed nothing (its one target is locked) still worked on it.
        let (skipped, marked) = marks("update_preferences", json!({"updates": [{"index": 1, "kind": "hard"}]})).await;
        assert!(skipped.success, "{skipped:?}");
        assert!(skipped.summary.as_deref().unwrap().contains("locked by the user"), "{skipped:?}");
        assert_eq!(h.workspace().await.preferences[0].kind, PreferenceKind::Soft);
        assert!(marked, "an agent call that changed nothing left the thread unmarked");

        // A call that fails after taking the thread (the parent is looked up under the lock)
        // leaves nothing behind, the mark included: `fail` compares the thread's row too.
        tokio::time::sleep(std::time::Duration::from_millis(30)).await;
        let error = h.fail("add_todos", args(json!({"steps": [{"text": "x"}], "parent_index": 99}))).await;
        assert!(error.contains("99"), "{error}");
        h.cleanup().await;
    }

    async fn failing_and_panicking_bodies_roll_back_everything(engine) {
        let h = Harness::new(engine).await;
        h.ok("set_objective", args(json!({"objective": "Keep me"}))).await;
        h.ok("update_document", args(json!({"content": "Keep me too", "title": "Doc"}))).await;
        let tools = test_tools(&h.thread);
        assert_eq!(tools.len(), 3);

        for (tool, kind, text) in [
            ("write_then_fail", FailureKind::InvalidArguments, "boom"),
            ("write_then_panic", FailureKind::Panic, "internal error"),
            ("write_then_miss", FailureKind::NotFound, "nothing here"),
        ] {
            // Twice each: a leaked transaction or connection would show on the second round.
            for _ in 0..2 {
                let before = h.state().await;
                let record = h.runtime.call(&tools, tool, args(json!({}))).await;
                assert!(!record.envelope.success, "{tool}: {:?}", record.envelope);
                assert_eq!(record.failure, Some(kind), "{tool}");
                let error = record.envelope.error.clone().unwrap();
                assert!(error.contains(text), "{tool}: {error}");
                assert!(record.envelope.summary.is_none() && record.envelope.artifact_id.is_none());
                assert!(record.changed.is_empty(), "{tool}: a failed call changed nothing");
                assert!(record.artifact.is_none());
                assert_eq!(record.turn_index, Some(0));
                assert_eq!(h.state().await, before, "{tool} left writes behind");
            }
        }
        // The panic text itself stays in the log, not in what the model reads.
        let record = h.runtime.call(&tools, "write_then_panic", args(json!({}))).await;
        assert!(!record.envelope.error.unwrap().contains("kaboom"));

        let ws = h.workspace().await;
        assert_eq!(ws.objective.as_deref(), Some("Keep me"));
        assert_eq!(ws.document.as_ref().unwrap().content, "Keep me too");
        assert!(ws.plan.is_empty() && ws.preferences.is_empty() && ws.artifacts.is_empty());

        // The database (on SQLite: its single writer connection) still takes writes.
        h.ok("set_objective", args(json!({"objective": "Changed after the failures"}))).await;
        h.ok("add_todos", args(json!({"steps": [{"text": "Still works"}]}))).await;
        let record = h.call_full("chart_generator", args(json!({
            "chart_type": "bar", "title": "After", "data": {"labels": ["a"], "series": [{"name": "s", "values": [1]}]},
        }))).await;
        assert!(record.envelope.success);
        let ws = h.workspace().await;
        assert_eq!(ws.objective.as_deref(), Some("Changed after the failures"));
        assert_eq!(ws.plan.len(), 1);
        assert_eq!(ws.artifacts.len(), 1);
        // And a failure after that still rolls back.
        let before = h.state().await;
        let record = h.runtime.call(&tools, "write_then_panic", args(json!({}))).await;
        assert_eq!(record.failure, Some(FailureKind::Panic));
        assert_eq!(h.state().await, before);
        h.cleanup().await;
    }

    async fn unknown_threads_and_tools_fail_without_writing(engine) {
        let h = Harness::new(engine).await;
        h.ok("set_objective", args(json!({"objective": "Main thread goal"}))).await;
        let before = h.state().await;

        let ghost = ThreadId::parse("ghost").unwrap();
        let ghost_tools = build_tools(&ghost);
        for (tool, fields) in [
            ("set_objective", json!({"objective": "Haunt"})),
            ("add_todos", json!({"steps": [{"text": "Boo"}]})),
            ("chart_generator", json!({"chart_type": "pie", "title": "T", "data": {"labels": ["a"], "series": [{"name": "s", "values": [1]}]}})),
            ("list_todos", json!({})),
        ] {
            let record = h.runtime.call(&ghost_tools, tool, args(fields)).await;
            assert!(!record.envelope.success, "{tool}");
            assert_eq!(record.failure, Some(FailureKind::UnknownThread), "{tool}");
            let error = record.envelope.error.unwrap();
            assert!(error.contains("ghost") && error.contains("does not exist"), "{error}");
            assert_eq!(record.turn_index, None);
            assert!(record.changed.is_empty() && record.artifact.is_none());
        }
        // Test-only tools on a missing thread are reported as such, whatever their body did
        // (on PostgreSQL the body runs: the thread is checked with its first statement).
        let record = h.runtime.call(&test_tools(&ghost), "write_then_fail", args(json!({}))).await;
        assert_eq!(record.failure, Some(FailureKind::UnknownThread));

        let mut repo = h.db().begin_read().await.unwrap();
        assert!(repo.threads().get_thread(&tid("ghost")).await.unwrap().is_none());
        let ws = repo.threads().workspace(&tid("ghost")).await.unwrap();
        repo.rollback().await.unwrap();
        assert!(ws.objective.is_none() && ws.document.is_none() && ws.plan.is_empty());
        assert!(ws.preferences.is_empty() && ws.artifacts.is_empty());
        assert_eq!(h.state().await, before);

        let record = h.call_full("delete_everything", args(json!({}))).await;
        assert_eq!(record.failure, Some(FailureKind::UnknownTool));
        assert_eq!(record.tool, "delete_everything");
        let error = record.envelope.error.unwrap();
        assert!(error.contains("unknown tool `delete_everything`"), "{error}");
        for name in SPEC_ORDER {
            assert!(error.contains(name), "the error lists the real tools: {error}");
        }
        let e = h.fail("Add_Todos", args(json!({"steps": [{"text": "x"}]}))).await;
        assert!(e.contains("unknown tool"), "{e}");
        // The name is checked first, whatever the arguments.
        let record = h.call_full("nope", json!("not even an object")).await;
        assert_eq!(record.failure, Some(FailureKind::UnknownTool));
        // The test-only tools are not part of a thread's real tool list.
        let e = h.fail("write_then_fail", args(json!({}))).await;
        assert!(e.contains("unknown tool"), "{e}");
        assert_eq!(h.state().await, before);
        h.cleanup().await;
    }

    async fn tool_call_record_describes_the_call(engine) {
        let h = Harness::new(engine).await;
        let steps = json!([{"text": "Outline", "depth": 0}, {"text": "Detail", "depth": 1}]);
        let record = h.call_full("add_todos", json!({
            "steps": steps,
            "action_and_reasoning": "  Lay out the steps we agreed on.  ",
        })).await;
        assert!(record.envelope.success);
        assert_eq!(record.tool, "add_todos");
        assert_eq!(record.arguments, json!({"steps": steps}));
        assert_eq!(record.action_and_reasoning.as_deref(), Some("Lay out the steps we agreed on."));
        assert_eq!(panels(record.changed), vec![Panel::Plan]);
        assert_eq!(record.failure, None);
        assert_eq!(record.turn_index, Some(0));
        assert!(record.artifact.is_none());

        let thread_before = h.state().await.thread;
        let record = h.call_full("list_todos", args(json!({}))).await;
        assert!(record.envelope.success);
        assert_eq!(record.arguments, json!({}));
        assert!(record.changed.is_empty());
        // A read-only call does not mark the thread as active.
        assert_eq!(h.state().await.thread, thread_before);

        // A call that finds nothing to do changes no panel either.
        let record = h.call_full("toggle_todos", args(json!({"indices": [99]}))).await;
        assert!(record.envelope.success && record.changed.is_empty());

        let cases = [
            ("set_objective", json!({"objective": "Goal"}), vec![Panel::Objective]),
            ("update_document", json!({"content": "Body"}), vec![Panel::Document]),
            ("append_to_document", json!({"text": " more"}), vec![Panel::Document]),
            ("edit_document", json!({"edits": [{"old_text": " more", "new_text": " and more"}]}), vec![Panel::Document]),
            ("toggle_todos", json!({"indices": [1]}), vec![Panel::Plan]),
            ("update_todos", json!({"updates": [{"index": 2, "text": "More detail"}]}), vec![Panel::Plan]),
            ("add_preferences", json!({"items": [{"title": "Cheap"}]}), vec![Panel::Preferences]),
            ("update_preferences", json!({"updates": [{"index": 1, "kind": "hard"}]}), vec![Panel::Preferences]),
            ("list_preferences", json!({}), vec![]),
            ("list_artifacts", json!({}), vec![]),
            ("remove_todos", json!({"indices": [1]}), vec![Panel::Plan]),
            ("remove_preferences", json!({"indices": [1]}), vec![Panel::Preferences]),
        ];
        for (tool, fields, expected) in cases {
            let record = h.call_full(tool, args(fields.clone())).await;
            assert!(record.envelope.success, "{tool}: {:?}", record.envelope);
            assert_eq!(record.arguments, fields, "{tool}");
            assert_eq!(record.action_and_reasoning.as_deref(), Some("Test the runtime."));
            assert_eq!(panels(record.changed), expected, "{tool}");
        }

        // A write leaves the turn counter alone (when the thread is marked active:
        // `every_agent_write_marks_the_thread_active`).
        h.ok("set_objective", args(json!({"objective": "Goal 2"}))).await;
        assert_eq!(h.state().await.thread.turn_index, 0);

        // Inside a turn the record (and the artifact) carry its index.
        let mut repo = h.db().begin_write().await.unwrap();
        assert_eq!(repo.threads().begin_turn(&h.thread).await.unwrap(), Some(1));
        repo.commit().await.unwrap();
        let chart_args = json!({
            "chart_type": "line", "title": "Trend",
            "data": {"labels": ["a", "b"], "series": [{"name": "s", "values": [1, 2]}]},
        });
        let record = h.call_full("chart_generator", args(chart_args.clone())).await;
        assert!(record.envelope.success);
        assert_eq!(record.arguments, chart_args);
        assert_eq!(panels(record.changed), vec![Panel::Artifacts]);
        assert_eq!(record.turn_index, Some(1));
        let stored = record.artifact.unwrap();
        assert_eq!(stored.turn_index, 1);
        assert_eq!(Some(stored.artifact_id), record.envelope.artifact_id);
        assert_eq!(stored.artifact_type, "line_chart");
        assert_eq!(stored.title.as_deref(), Some("Trend"));
        assert_eq!(Some(&stored.payload), record.envelope.artifact.as_ref().map(|a| &a["payload"]));

        // Failures: the record keeps what was asked, and says why it failed.
        let record = h.call_full("add_todos", args(json!({"steps": []}))).await;
        assert_eq!(record.failure, Some(FailureKind::InvalidArguments));
        assert_eq!(record.arguments, json!({"steps": []}));
        assert_eq!(record.action_and_reasoning.as_deref(), Some("Test the runtime."));
        assert!(record.changed.is_empty());
        assert_eq!(record.turn_index, Some(1));
        let record = h.call_full("add_todos", json!({"steps": [{"text": "x"}]})).await;
        assert_eq!(record.failure, Some(FailureKind::InvalidArguments));
        assert_eq!(record.action_and_reasoning, None);
        let e = record.envelope.error.unwrap();
        assert!(e.contains("missing required argument `action_and_reasoning`"), "{e}");
        for bad in [json!(null), json!([1]), json!("text"), json!(3)] {
            let e = h.fail("list_todos", bad.clone()).await;
            assert!(e.contains("must be a JSON object"), "{bad}: {e}");
        }
        let e = h.fail("list_todos", json!({"action_and_reasoning": ["why"]})).await;
        assert!(e.contains("must be a string"), "{e}");
        h.cleanup().await;
    }
}

/// Every string under a `description` key, anywhere in `value`.
fn descriptions<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                if let (true, Value::String(text)) = (key == "description", inner) {
                    out.push(text);
                } else {
                    descriptions(inner, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| descriptions(item, out)),
        _ => {}
    }
}

#[test]
fn tool_specs_are_the_sixteen_tools_in_spec_order() {
    let specs = tool_specs();
    let names: Vec<&str> = specs.iter().map(|s| s.name).collect();
    assert_eq!(names, SPEC_ORDER);
    // Every thread gets the same tools.
    let other = build_tools(&ThreadId::parse("any-thread").unwrap());
    assert_eq!(other.specs(), specs);
    assert_eq!(other.len(), 16);
}

#[test]
fn every_schema_requires_action_and_reasoning() {
    for spec in tool_specs() {
        let p = &spec.parameters;
        assert_eq!(p["type"], json!("object"), "{}", spec.name);
        let required: Vec<&str> = p["required"]
            .as_array()
            .unwrap_or_else(|| panic!("{}: no required list", spec.name))
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert!(required.contains(&"action_and_reasoning"), "{}", spec.name);
        let props = p["properties"].as_object().unwrap();
        assert_eq!(
            props["action_and_reasoning"]["type"],
            json!("string"),
            "{}",
            spec.name
        );
        assert!(props["action_and_reasoning"]["description"].is_string());
        for name in &required {
            assert!(
                props.contains_key(*name),
                "{}: required `{name}` is not a property",
                spec.name
            );
        }
        // The runtime rejects unknown fields; the schema says so too.
        assert_eq!(p["additionalProperties"], json!(false), "{}", spec.name);
        assert!(!spec.description.trim().is_empty(), "{}", spec.name);
    }
}

#[test]
fn no_argument_tools_have_only_action_and_reasoning() {
    for spec in tool_specs() {
        let props: Vec<&String> = spec.parameters["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        if ["list_todos", "list_preferences"].contains(&spec.name) {
            assert_eq!(props, ["action_and_reasoning"], "{}", spec.name);
            assert_eq!(spec.parameters["required"], json!(["action_and_reasoning"]));
        } else {
            assert!(props.len() > 1, "{} should take arguments", spec.name);
        }
    }
}

#[test]
fn schemas_match_the_tool_arguments() {
    let specs = tool_specs();
    let find = |name: &str| &specs.iter().find(|s| s.name == name).unwrap().parameters;
    let required = |name: &str| -> Vec<String> {
        let mut list: Vec<String> = find(name)["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        list.sort();
        list
    };
    assert_eq!(required("add_todos"), ["action_and_reasoning", "steps"]);
    assert_eq!(
        required("update_document"),
        ["action_and_reasoning", "content"]
    );
    assert_eq!(required("edit_document"), ["action_and_reasoning", "edits"]);
    let edits = &find("edit_document")["properties"]["edits"];
    assert_eq!(edits["type"], json!("array"));
    let mut item_required: Vec<&str> = edits["items"]["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    item_required.sort_unstable();
    assert_eq!(item_required, ["new_text", "old_text"]);
    assert_eq!(edits["items"]["additionalProperties"], json!(false));
    assert_eq!(
        required("chart_generator"),
        ["action_and_reasoning", "chart_type", "data", "title"]
    );
    assert_eq!(required("list_artifacts"), ["action_and_reasoning"]);
    assert_eq!(
        required("get_artifact"),
        ["action_and_reasoning", "artifact_id"]
    );
    assert_eq!(
        find("add_todos")["properties"]["steps"]["type"],
        json!("array")
    );
    assert!(find("add_todos")["properties"]["parent_index"].is_object());
    let chart = find("chart_generator").to_string();
    for kind in ["\"line\"", "\"bar\"", "\"pie\""] {
        assert!(chart.contains(kind), "chart_type lists {kind}");
    }
    let prefs = find("add_preferences").to_string();
    assert!(prefs.contains("\"hard\"") && prefs.contains("\"soft\""));
}

#[test]
fn descriptions_are_single_lines_and_schemas_are_inlined() {
    for spec in tool_specs() {
        assert!(
            !spec.description.contains('\n'),
            "{}: {:?}",
            spec.name,
            spec.description
        );
        let mut found = Vec::new();
        descriptions(&spec.parameters, &mut found);
        assert!(!found.is_empty(), "{}", spec.name);
        for text in found {
            assert!(!text.contains('\n'), "{}: {text:?}", spec.name);
            assert!(!text.trim().is_empty(), "{}", spec.name);
        }
        let text = spec.parameters.to_string();
        assert!(
            !text.contains("$ref") && !text.contains("$defs") && !text.contains("definitions"),
            "{}: {text}",
            spec.name
        );
        assert!(!text.contains("$schema"), "{}", spec.name);
    }
}

backend_tests! {
    async fn read_only_tools_do_not_wait_for_a_writer(engine) {
        let h = Harness::new(engine).await;
        h.ok("add_todos", serde_json::json!({"action_and_reasoning": "Plan.", "steps": [{"text": "one"}]})).await;
        // Hold the thread's write lock (and, on SQLite, the only writer connection).
        let mut writer = h.db().begin_write().await.unwrap();
        assert!(writer.threads().lock_thread(&h.thread).await.unwrap().is_some());
        // Reads still answer, from the last committed state.
        for (tool, expected) in [
            ("list_todos", "1. [ ] one"),
            ("list_preferences", "(no preferences recorded yet)"),
            ("list_artifacts", "(no artifacts yet)"),
        ] {
            let call = tokio::time::timeout(
                std::time::Duration::from_secs(5),
                h.call(tool, serde_json::json!({"action_and_reasoning": "Look."})),
            )
            .await
            .unwrap_or_else(|_| panic!("{tool} waited for the writer"));
            assert!(call.success, "{tool}: {call:?}");
            assert_eq!(call.summary.as_deref(), Some(expected));
        }
        writer.rollback().await.unwrap();
        // A read-only tool on an unknown thread is still reported as such.
        let other = haico::ThreadId::parse("nobody").unwrap();
        let tools = haico::tools::build_tools(&other);
        let call = h
            .runtime
            .call(&tools, "list_todos", serde_json::json!({"action_and_reasoning": "Look."}))
            .await;
        assert_eq!(call.failure, Some(haico::tools::FailureKind::UnknownThread));
        h.cleanup().await;
    }
}
