//! `chart_generator`, `list_artifacts` and `get_artifact`, on SQLite and PostgreSQL.

use crate::common;

use common::Harness;
use haico::{
    panels::Panel,
    store::Artifact,
    tools::{FailureKind, build_tools},
};
use serde_json::{Value, json};

/// `fields` plus the `action_and_reasoning` every call must carry.
fn args(fields: Value) -> Value {
    let mut map = match fields {
        Value::Object(map) => map,
        other => panic!("test arguments must be an object, got {other}"),
    };
    map.insert(
        "action_and_reasoning".into(),
        json!("Show the numbers as a chart."),
    );
    Value::Object(map)
}

/// A small valid chart of `kind` titled `title`.
fn chart(kind: &str, title: &str) -> Value {
    args(json!({
        "chart_type": kind,
        "title": title,
        "data": {"labels": ["a", "b"], "series": [{"name": "s", "values": [1, 2]}]},
    }))
}

/// Starts the thread's next turn, as the agent loop does.
async fn begin_turn(h: &Harness) -> i64 {
    let mut repo = h.db().begin_write().await.unwrap();
    let turn = repo.threads().begin_turn(&h.thread).await.unwrap().unwrap();
    repo.commit().await.unwrap();
    turn
}

async fn stored(h: &Harness, id: i64) -> Artifact {
    let mut repo = h.db().begin_read().await.unwrap();
    let artifact = repo
        .artifacts()
        .get_artifact(&h.thread, id)
        .await
        .unwrap()
        .unwrap();
    repo.rollback().await.unwrap();
    artifact
}

/// Makes a chart through the runtime and checks its envelope, record and stored row; returns
/// the artifact id.
async fn make_chart(h: &Harness, call: Value, kind: &str, payload: Value, turn: i64) -> i64 {
    let title = payload["title"].clone();
    let record = h.call_full("chart_generator", call).await;
    let env = &record.envelope;
    assert!(env.success, "{env:?}");
    let id = env.artifact_id.expect("artifact id");
    let artifact_type = format!("{kind}_chart");
    assert_eq!(
        env.artifact,
        Some(json!({"artifact_type": artifact_type, "title": title, "payload": payload}))
    );
    // The envelope's wire shape.
    let wire = env.to_value();
    assert_eq!(wire["success"], json!(true));
    assert_eq!(wire["artifact_id"], json!(id));
    assert_eq!(wire["artifact"]["payload"], payload);
    assert!(wire.get("error").is_none());

    let record_artifact = record.artifact.expect("stored artifact in the record");
    assert_eq!(
        (
            record_artifact.artifact_id,
            record_artifact.artifact_type.as_str(),
            record_artifact.turn_index
        ),
        (id, artifact_type.as_str(), turn)
    );
    assert!(record.changed.contains(Panel::Artifacts));

    let row = stored(h, id).await;
    assert_eq!(row.summary.artifact_type, artifact_type);
    assert_eq!(row.summary.title.as_deref(), title.as_str());
    assert_eq!(row.summary.turn_index, turn);
    assert_eq!(row.payload, payload);
    let ws = h.workspace().await;
    assert_eq!(ws.artifacts[0].id, id, "newest first in the workspace");
    assert_eq!(ws.artifacts[0].turn_index, turn);
    id
}

backend_tests! {
    async fn line_chart_is_stored_with_its_turn(engine) {
        let h = Harness::new(engine).await;
        let call = args(json!({
            "chart_type": "line",
            "title": "  Visitors per month ",
            "description": "Visitors to the site in the first quarter.",
            "data": {"labels": ["Jan", "Feb", "Mar"], "series": [
                {"name": "2024", "values": [120, 98.5, 143]},
                {"name": "2025", "values": [130, -4, 0]},
            ]},
            "x_axis_title": "Month",
            "y_axis_title": "Visitors",
            "style": {"smooth": true, "colors": ["#1f77b4", "teal"], "show_legend": false},
        }));
        let payload = json!({
            "title": "Visitors per month",
            "description": "Visitors to the site in the first quarter.",
            "data": {"labels": ["Jan", "Feb", "Mar"], "series": [
                {"name": "2024", "values": [120.0, 98.5, 143.0]},
                {"name": "2025", "values": [130.0, -4.0, 0.0]},
            ]},
            "x_axis_title": "Month",
            "y_axis_title": "Visitors",
            "style": {"colors": ["#1f77b4", "teal"], "smooth": true, "show_legend": false},
        });
        // Before the first turn, artifacts carry turn 0.
        let first = make_chart(&h, call.clone(), "line", payload.clone(), 0).await;
        assert_eq!(begin_turn(&h).await, 1);
        let second = make_chart(&h, call, "line", payload, 1).await;
        assert!(second > first);
        let s = h.ok("chart_generator", chart("line", "Again")).await;
        assert_eq!(s, "created line chart \"Again\" (1 series, 2 labels)");
        let ws = h.workspace().await;
        assert_eq!(ws.artifacts.iter().map(|a| a.turn_index).collect::<Vec<_>>(), vec![1, 1, 0]);
        h.cleanup().await;
    }

    async fn bar_chart_keeps_its_style_and_leaves_optional_fields_null(engine) {
        let h = Harness::new(engine).await;
        begin_turn(&h).await;
        begin_turn(&h).await;
        let call = args(json!({
            "chart_type": "bar",
            "title": "Costs",
            "description": "   ",
            "data": {"labels": ["Flights", "Hotel"], "series": [
                {"name": "Plan A", "values": [420, 610]},
                {"name": "Plan B", "values": [380, 700.25]},
            ]},
            "style": {"stacked": true, "colors": ["rgb(10, 20, 30)", "#abc"]},
        }));
        let payload = json!({
            "title": "Costs",
            "description": null,
            "data": {"labels": ["Flights", "Hotel"], "series": [
                {"name": "Plan A", "values": [420.0, 610.0]},
                {"name": "Plan B", "values": [380.0, 700.25]},
            ]},
            "x_axis_title": null,
            "y_axis_title": null,
            "style": {"colors": ["rgb(10, 20, 30)", "#abc"], "stacked": true},
        });
        make_chart(&h, call, "bar", payload, 2).await;
        let s = h.ok("chart_generator", args(json!({
            "chart_type": "bar",
            "title": "Costs",
            "data": {"labels": ["Flights", "Hotel"], "series": [{"name": "A", "values": [1, 2]}, {"name": "B", "values": [3, 4]}]},
        }))).await;
        assert_eq!(s, "created bar chart \"Costs\" (2 series, 2 labels)");
        h.cleanup().await;
    }

    async fn pie_chart_takes_one_non_negative_series(engine) {
        let h = Harness::new(engine).await;
        let call = args(json!({
            "chart_type": "pie",
            "title": "Budget split",
            "data": {"labels": ["Travel", "Food", "Fun"], "series": [{"name": "EUR", "values": [0, 300, 150.5]}]},
            "style": {"donut": true, "show_legend": true},
        }));
        let payload = json!({
            "title": "Budget split",
            "description": null,
            "data": {"labels": ["Travel", "Food", "Fun"], "series": [{"name": "EUR", "values": [0.0, 300.0, 150.5]}]},
            "x_axis_title": null,
            "y_axis_title": null,
            "style": {"donut": true, "show_legend": true},
        });
        make_chart(&h, call, "pie", payload, 0).await;
        h.cleanup().await;
    }

    async fn chart_generator_rejects_bad_charts_without_storing(engine) {
        let h = Harness::new(engine).await;
        h.ok("chart_generator", chart("bar", "Existing")).await;

        let with = |kind: &str, data: Value, style: Value| {
            args(json!({"chart_type": kind, "title": "T", "data": data, "style": style}))
        };
        let ok_data = json!({"labels": ["a", "b", "c"], "series": [{"name": "s", "values": [1, 2, 3]}]});
        let cases: Vec<(Value, &str)> = vec![
            (with("line", json!({"labels": [], "series": [{"name": "s", "values": []}]}), json!({})), "`data.labels` is empty"),
            (with("bar", json!({"labels": ["a"], "series": []}), json!({})), "`data.series` is empty"),
            (
                with("line", json!({"labels": ["a", "b", "c"], "series": [{"name": "s", "values": [1, 2, 3]}, {"name": "t", "values": [1, 2]}]}), json!({})),
                "`data.series[1].values` has 2 values but there are 3 labels",
            ),
            (
                with("bar", json!({"labels": ["a", "b"], "series": [{"name": "s", "values": [1, 2, 3]}]}), json!({})),
                "`data.series[0].values` has 3 values but there are 2 labels",
            ),
            (
                with("pie", json!({"labels": ["a", "b"], "series": [{"name": "s", "values": [1, 2]}, {"name": "t", "values": [3, 4]}]}), json!({})),
                "exactly one series, got 2",
            ),
            (
                with("pie", json!({"labels": ["a", "b", "c"], "series": [{"name": "s", "values": [1, -2, 3]}]}), json!({})),
                "`data.series[0].values[1]` is negative",
            ),
            (with("pie", json!({"labels": ["a", "b"], "series": [{"name": "s", "values": [0, 0]}]}), json!({})), "add up to zero"),
            (with("scatter", ok_data.clone(), json!({})), "chart_type"),
            (with("line", ok_data.clone(), json!({"stacked": true})), "`style.stacked` applies to bar charts only"),
            (with("bar", ok_data.clone(), json!({"smooth": true})), "`style.smooth` applies to line charts only"),
            (with("line", ok_data.clone(), json!({"donut": false})), "`style.donut` applies to pie charts only"),
            (with("bar", ok_data.clone(), json!({"colors": ["#fff", "red;}"]})), "`style.colors[1]`"),
            (with("bar", ok_data.clone(), json!({"colors": ["url(evil)"]})), "`style.colors[0]`"),
            (with("bar", ok_data.clone(), json!({"shadow": true})), "unknown field `shadow`"),
            (
                with("bar", json!({"labels": ["a"], "series": [{"name": "  ", "values": [1]}]}), json!({})),
                "`data.series[0].name` must not be empty",
            ),
            (
                with("bar", json!({"labels": ["a"], "series": [{"name": "s", "values": ["1"]}]}), json!({})),
                "data.series[0].values[0]",
            ),
            (with("bar", json!({"labels": ["a"]}), json!({})), "missing field `series`"),
            (with("bar", json!({"labels": ["a"], "series": [{"name": "s", "values": [1]}], "colors": []}), json!({})), "unknown field `colors`"),
            (args(json!({"chart_type": "bar", "title": "   ", "data": ok_data.clone()})), "`title` must not be empty"),
            (args(json!({"chart_type": "bar", "data": ok_data.clone()})), "missing field `title`"),
            (args(json!({"chart_type": "bar", "title": "T"})), "missing field `data`"),
            (args(json!({"title": "T", "data": ok_data.clone()})), "missing field `chart_type`"),
            (args(json!({"chart_type": "bar", "title": "T", "data": "1,2,3"})), "data"),
            (json!({"chart_type": "bar", "title": "T", "data": ok_data.clone()}), "action_and_reasoning"),
        ];
        for (call, expected) in cases {
            let e = h.fail("chart_generator", call.clone()).await;
            assert!(e.contains(expected), "{call}: expected {expected:?} in {e:?}");
        }
        assert_eq!(h.workspace().await.artifacts.len(), 1);
        h.cleanup().await;
    }

    async fn list_artifacts_is_newest_first_and_filters(engine) {
        let h = Harness::new(engine).await;
        assert_eq!(h.ok("list_artifacts", args(json!({}))).await, "(no artifacts yet)");
        assert_eq!(
            h.ok("list_artifacts", args(json!({"artifact_type": "bar_chart"}))).await,
            "(no bar_chart artifacts yet)"
        );

        let line = h.call("chart_generator", chart("line", "Trend")).await.artifact_id.unwrap();
        begin_turn(&h).await;
        let bar = h.call("chart_generator", chart("bar", "Costs")).await.artifact_id.unwrap();
        let pie = h.call("chart_generator", chart("pie", "Split")).await.artifact_id.unwrap();

        let before = h.state().await;
        let all = h.ok("list_artifacts", args(json!({}))).await;
        assert_eq!(
            all,
            format!(
                "#{pie} pie_chart \"Split\" (turn 1)\n#{bar} bar_chart \"Costs\" (turn 1)\n#{line} line_chart \"Trend\" (turn 0)"
            )
        );
        let bars = h.ok("list_artifacts", args(json!({"artifact_type": "bar_chart"}))).await;
        assert_eq!(bars, format!("#{bar} bar_chart \"Costs\" (turn 1)"));
        let lines = h.ok("list_artifacts", args(json!({"artifact_type": " line_chart ", "limit": 5}))).await;
        assert_eq!(lines, format!("#{line} line_chart \"Trend\" (turn 0)"));
        let newest = h.ok("list_artifacts", args(json!({"limit": 2}))).await;
        assert_eq!(newest.lines().count(), 2);
        assert!(newest.starts_with(&format!("#{pie} ")) && newest.ends_with(&format!("#{bar} bar_chart \"Costs\" (turn 1)")));
        assert_eq!(
            h.ok("list_artifacts", args(json!({"artifact_type": "table"}))).await,
            "(no table artifacts yet)"
        );
        // Reading writes nothing.
        assert_eq!(h.state().await, before);
        assert!(h.call_full("list_artifacts", args(json!({}))).await.changed.is_empty());
        h.cleanup().await;
    }

    async fn list_artifacts_limits(engine) {
        let h = Harness::new(engine).await;
        let mut ids = Vec::new();
        for i in 0..25 {
            ids.push(h.call("chart_generator", chart("bar", &format!("Chart {i}"))).await.artifact_id.unwrap());
        }
        // Default: the 20 newest.
        let listed = h.ok("list_artifacts", args(json!({}))).await;
        let lines: Vec<&str> = listed.lines().collect();
        assert_eq!(lines.len(), 20);
        assert_eq!(lines[0], format!("#{} bar_chart \"Chart 24\" (turn 0)", ids[24]));
        assert_eq!(lines[19], format!("#{} bar_chart \"Chart 5\" (turn 0)", ids[5]));
        assert_eq!(h.ok("list_artifacts", args(json!({"limit": 25}))).await.lines().count(), 25);
        assert_eq!(h.ok("list_artifacts", args(json!({"limit": 1}))).await, lines[0]);

        // Push the thread past 100 artifacts; any larger limit is taken as 100.
        let mut repo = h.db().begin_write().await.unwrap();
        for i in 0..90 {
            repo.artifacts().add_artifact(&h.thread, "line_chart", Some(&format!("Bulk {i}")), &json!({}), Some(0))
                .await
                .unwrap()
                .expect("the thread exists");
        }
        repo.commit().await.unwrap();
        for limit in [json!(100), json!(101), json!(1_000), json!(i64::MAX)] {
            let listed = h.ok("list_artifacts", args(json!({"limit": limit}))).await;
            let lines: Vec<&str> = listed.lines().collect();
            assert_eq!(lines.len(), 100, "limit {limit}");
            assert!(lines[0].contains("\"Bulk 89\""), "{}", lines[0]);
            assert!(lines[99].contains("\"Chart 15\""), "{}", lines[99]);
        }

        for bad in [json!(0), json!(-1), json!(i64::MIN)] {
            let e = h.fail("list_artifacts", args(json!({"limit": bad}))).await;
            assert!(e.contains("limit") && e.contains(&bad.to_string()), "{e}");
        }
        let e = h.fail("list_artifacts", args(json!({"limit": "5"}))).await;
        assert!(e.contains("limit"), "{e}");
        let e = h.fail("list_artifacts", args(json!({"limit": 2.5}))).await;
        assert!(e.contains("limit"), "{e}");
        let e = h.fail("list_artifacts", args(json!({"kind": "bar_chart"}))).await;
        assert!(e.contains("unknown field `kind`"), "{e}");
        let e = h.fail("list_artifacts", json!({})).await;
        assert!(e.contains("action_and_reasoning"), "{e}");
        h.cleanup().await;
    }

    async fn get_artifact_reads_only_this_threads_artifacts(engine) {
        let h = Harness::new(engine).await;
        begin_turn(&h).await;
        let made = h.call("chart_generator", chart("pie", "Mine")).await;
        let id = made.artifact_id.unwrap();

        let before = h.state().await;
        let record = h.call_full("get_artifact", args(json!({"artifact_id": id}))).await;
        assert!(record.envelope.success);
        assert!(record.envelope.artifact.is_none() && record.envelope.artifact_id.is_none());
        assert!(record.artifact.is_none() && record.changed.is_empty());
        assert_eq!(h.state().await, before, "get_artifact writes nothing");
        let text = record.envelope.summary.unwrap();
        let got: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(got["id"], json!(id));
        assert_eq!(got["artifact_type"], json!("pie_chart"));
        assert_eq!(got["title"], json!("Mine"));
        assert_eq!(got["turn_index"], json!(1));
        assert!(got["created_at"].is_string());
        assert_eq!(got["payload"], made.artifact.unwrap()["payload"]);
        assert_eq!(got["payload"]["data"]["series"][0]["values"], json!([1.0, 2.0]));

        // Another thread's artifact is "not found" here, and the failure writes nothing.
        let other = common::create_thread(h.db(), "other").await;
        let other_tools = build_tools(&other);
        let theirs = h.runtime.call(&other_tools, "chart_generator", chart("line", "Theirs")).await;
        assert!(theirs.envelope.success);
        assert_eq!(theirs.turn_index, Some(0), "the other thread has its own turn count");
        let their_id = theirs.envelope.artifact_id.unwrap();

        let e = h.fail("get_artifact", args(json!({"artifact_id": their_id}))).await;
        assert!(e.contains("not found") && e.contains(&their_id.to_string()), "{e}");
        let record = h.call_full("get_artifact", args(json!({"artifact_id": their_id}))).await;
        assert_eq!(record.failure, Some(FailureKind::NotFound));
        for unknown in [their_id + 1_000, 0, -1, i64::MAX] {
            let e = h.fail("get_artifact", args(json!({"artifact_id": unknown}))).await;
            assert!(e.contains("not found"), "{e}");
        }
        let e = h.fail("get_artifact", args(json!({"artifact_id": "1"}))).await;
        assert!(e.contains("artifact_id"), "{e}");
        let e = h.fail("get_artifact", args(json!({}))).await;
        assert!(e.contains("missing field `artifact_id`"), "{e}");
        let e = h.fail("get_artifact", json!({"artifact_id": id})).await;
        assert!(e.contains("action_and_reasoning"), "{e}");

        // Each thread lists and reads only its own.
        let listed = h.ok("list_artifacts", args(json!({}))).await;
        assert_eq!(listed, format!("#{id} pie_chart \"Mine\" (turn 1)"));
        let theirs_listed = h.runtime.call(&other_tools, "list_artifacts", args(json!({}))).await;
        assert_eq!(theirs_listed.envelope.summary.unwrap(), format!("#{their_id} line_chart \"Theirs\" (turn 0)"));
        let theirs_read = h.runtime.call(&other_tools, "get_artifact", args(json!({"artifact_id": their_id}))).await;
        assert!(theirs_read.envelope.success, "{:?}", theirs_read.envelope);
        let mine_from_there = h.runtime.call(&other_tools, "get_artifact", args(json!({"artifact_id": id}))).await;
        assert!(!mine_from_there.envelope.success);
        h.cleanup().await;
    }
}
