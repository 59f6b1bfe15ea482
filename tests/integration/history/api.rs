//! The history API through a real server on both engines: which changes become revisions (and
//! which do not), paging, `?at=` bounds, document diffs, restores and their events, forks and
//! their independence, and recordings (export → import → export, broken recordings refused
//! whole).

use crate::common;

use std::time::Duration;

use common::{
    server::{TestServer, setup, teardown},
    sse::SseReader,
};
use reqwest::Method;
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(10);

fn why(mut args: Value) -> Value {
    args["action_and_reasoning"] = json!("Keep the workspace current.");
    args
}

async fn history(server: &TestServer, thread: &str) -> Vec<Value> {
    server
        .get(&format!("/api/threads/{thread}/history?limit=500"))
        .await
        .expect(200)["revisions"]
        .as_array()
        .unwrap()
        .clone()
}

async fn put(server: &TestServer, path: &str, body: Value) -> common::server::Reply {
    server.request(Method::PUT, path, Some(&body)).await
}

/// A workspace snapshot without the ids a copy renumbers (steps, preferences, artifacts) and
/// the artifacts' timestamps.
fn without_ids(mut ws: Value) -> Value {
    for list in ["todos", "preferences", "artifacts"] {
        for item in ws[list].as_array_mut().unwrap() {
            item.as_object_mut().unwrap().remove("id");
        }
    }
    ws
}

/// Every line of a recording, minus its first (the thread) and the ids a copy renumbers.
fn comparable(recording: &str) -> Vec<Value> {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.remove("id");
                if let Some(Value::Array(ids)) = map.get_mut("ids") {
                    ids.clear();
                }
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    recording
        .lines()
        .skip(1)
        .map(|line| {
            let mut value: Value = serde_json::from_str(line).unwrap();
            strip(&mut value);
            value
        })
        .collect()
}

async fn export(server: &TestServer, thread: &str) -> String {
    let response = server
        .client
        .get(server.url(&format!("/api/threads/{thread}/export")))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "application/x-ndjson"
    );
    response.text().await.unwrap()
}

async fn import(server: &TestServer, body: &str, query: &str) -> (u16, Value) {
    let response = server
        .client
        .post(server.url(&format!("/api/threads/import{query}")))
        .header("content-type", "application/x-ndjson")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

backend_tests! {
    async fn every_kind_of_change_is_a_revision_and_nothing_else_is(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("t").await;
        let page = server.get("/api/threads/t/history").await.expect(200);
        assert_eq!(page, json!({"revisions": [], "next_before": null}));

        server.tool_ok("t", "set_objective", why(json!({"objective": "Plan a trip"}))).await;
        put(&server, "/api/threads/t/document", json!({"content": "Day 1"})).await.expect(200);
        server.tool_ok("t", "add_todos", why(json!({"steps": [{"text": "Book"}]}))).await;
        server.post("/api/threads/t/preferences", &json!({"title": "Cheap"})).await.expect(201);
        let chart = json!({"chart_type": "pie", "title": "Split", "data": {"labels": ["a"], "series": [{"name": "s", "values": [1]}]}});
        server.tool_ok("t", "chart_generator", why(chart)).await;
        let revisions = history(&server, "t").await;
        assert_eq!(revisions.len(), 5);
        let newest_first: Vec<i64> = revisions.iter().map(|r| r["rev"].as_i64().unwrap()).collect();
        assert_eq!(newest_first, [5, 4, 3, 2, 1]);
        let first = &revisions[4];
        assert_eq!(first["source"], json!("agent"));
        assert_eq!(first["tool"], json!("set_objective"));
        assert_eq!(first["action_and_reasoning"], json!("Keep the workspace current."));
        assert_eq!(first["panels"], json!(["objective"]));
        assert_eq!(first["summary"], json!("objective set: Plan a trip"));
        assert_eq!(first["turn_index"], json!(null));
        assert_eq!(first["by"], json!(null));
        assert_eq!(first["restored_from"], json!(null));
        let user_edit = &revisions[3];
        assert_eq!(user_edit["source"], json!("user"));
        assert_eq!(user_edit["tool"], json!(null));
        assert_eq!(user_edit["panels"], json!(["document"]));
        assert!(!user_edit["summary"].as_str().unwrap().is_empty());
        assert_eq!(revisions[0]["panels"], json!(["artifacts"]));
        let keys: std::collections::BTreeSet<&str> = first.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["action_and_reasoning", "at", "by", "panels", "restored_from", "rev", "reverted_turn", "source", "summary", "tool", "turn_index"].into_iter().collect());

        // Reads, failures and no-ops make no revision.
        server.get("/api/threads/t/workspace").await.expect(200);
        server.tool_ok("t", "list_todos", why(json!({}))).await;
        let failed = server.tool("t", "add_todos", why(json!({"steps": []}))).await;
        assert_eq!(failed["success"], json!(false));
        server.tool_ok("t", "toggle_todos", why(json!({"indices": [42]}))).await;
        server.patch("/api/threads/t/preferences/999999", &json!({"title": "x"})).await.error(404);
        put(&server, "/api/threads/t/objective", json!({"objective": ""})).await.error(400);
        assert_eq!(history(&server, "t").await.len(), 5);
        teardown(tdb, server).await;
    }

    async fn history_pages_and_bounds(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("t").await;
        for i in 0..7 {
            put(&server, "/api/threads/t/objective", json!({"objective": format!("goal {i}")})).await.expect(200);
        }
        let page = server.get("/api/threads/t/history?limit=3").await.expect(200);
        let revs = |page: &Value| -> Vec<i64> { page["revisions"].as_array().unwrap().iter().map(|r| r["rev"].as_i64().unwrap()).collect() };
        assert_eq!(revs(&page), [7, 6, 5]);
        assert_eq!(page["next_before"], json!(5));
        let page = server.get("/api/threads/t/history?limit=3&before=5").await.expect(200);
        assert_eq!(revs(&page), [4, 3, 2]);
        assert_eq!(page["next_before"], json!(2));
        let page = server.get("/api/threads/t/history?limit=3&before=2").await.expect(200);
        assert_eq!(revs(&page), [1]);
        assert_eq!(page["next_before"], json!(null));
        for bad in ["limit=0", "limit=501", "before=0", "limit=x", "colour=red"] {
            server.get(&format!("/api/threads/t/history?{bad}")).await.error(400);
        }
        server.get("/api/threads/ghost/history").await.error(404);
        // The workspace at a revision: 0 is empty, past the latest is 404, negative is 400.
        let empty = server.get("/api/threads/t/workspace?at=0").await.expect(200);
        assert_eq!(empty, json!({"objective": null, "document": null, "todos": [], "preferences": [], "artifacts": [],
                                 "document_mode": "direct", "suggestions": []}));
        assert_eq!(server.get("/api/threads/t/workspace?at=3").await.expect(200)["objective"], json!("goal 2"));
        server.get("/api/threads/t/workspace?at=8").await.error(404);
        server.get("/api/threads/t/workspace?at=-1").await.error(400);
        server.get("/api/threads/ghost/workspace?at=0").await.error(404);
        teardown(tdb, server).await;
    }

    async fn document_diffs_between_revisions(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("t").await;
        put(&server, "/api/threads/t/document", json!({"content": "alpha\nbeta\ngamma\n"})).await.expect(200);
        server.tool_ok("t", "update_document", why(json!({"content": "alpha\nBETA\ngamma\ndelta\n"}))).await;
        server.tool_ok("t", "set_objective", why(json!({"objective": "Something else"}))).await;
        let diff = server.get("/api/threads/t/document/diff?from=1&to=2").await.expect(200);
        assert_eq!(diff["from"], json!(1));
        assert_eq!(diff["to"], json!(2));
        let unified = diff["unified"].as_str().unwrap();
        assert!(unified.starts_with("--- revision 1\n+++ revision 2\n@@"), "{unified}");
        for line in ["-beta", "+BETA", "+delta", " alpha"] {
            assert!(unified.lines().any(|l| l == line), "{line} missing in {unified}");
        }
        // `to` defaults to the latest; a revision that changed nothing else diffs the same.
        let latest = server.get("/api/threads/t/document/diff?from=1").await.expect(200);
        assert_eq!(latest["to"], json!(3));
        assert_eq!(latest["unified"].as_str().unwrap().replace("revision 3", "revision 2"), unified);
        let same = server.get("/api/threads/t/document/diff?from=2&to=3").await.expect(200);
        assert_eq!(same["unified"], json!(""));
        // From nothing: every line added.
        let from_empty = server.get("/api/threads/t/document/diff?from=0&to=1").await.expect(200);
        assert!(from_empty["unified"].as_str().unwrap().contains("+alpha"));
        server.get("/api/threads/t/document/diff?from=9").await.error(404);
        server.get("/api/threads/t/document/diff").await.error(400);
        server.get("/api/threads/ghost/document/diff?from=0").await.error(404);
        teardown(tdb, server).await;
    }

    async fn restores_set_panels_back_and_are_announced(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("t").await;
        server.tool_ok("t", "set_objective", why(json!({"objective": "First"}))).await;
        server.tool_ok("t", "add_todos", why(json!({"steps": [{"text": "A"}, {"text": "B"}]}))).await;
        let pref = server.post("/api/threads/t/preferences", &json!({"title": "Keep", "locked": true})).await.expect(201);
        let at3 = server.get("/api/threads/t/workspace?at=3").await.expect(200);
        server.tool_ok("t", "set_objective", why(json!({"objective": "Second"}))).await;
        server.tool_ok("t", "remove_todos", why(json!({"indices": [1]}))).await;
        server.delete(&format!("/api/threads/t/preferences/{}", pref["id"])).await.expect(204);
        let chart = json!({"chart_type": "bar", "title": "C", "data": {"labels": ["a"], "series": [{"name": "s", "values": [1]}]}});
        server.tool_ok("t", "chart_generator", why(chart)).await;

        let mut events = SseReader::open(&server.client, &server.url("/api/threads/t/events"), None).await;
        // Bad restores change nothing.
        for bad in [json!({"rev": 1, "panels": ["artifacts"]}), json!({"rev": 1, "panels": ["bogus"]}), json!({"rev": 1, "panels": []}), json!({"rev": -1})] {
            server.post("/api/threads/t/restore", &bad).await.error(400);
        }
        server.post("/api/threads/t/restore", &json!({"rev": 99})).await.error(404);
        server.post("/api/threads/ghost/restore", &json!({"rev": 0})).await.error(404);
        assert_eq!(history(&server, "t").await.len(), 7);

        let restored = server.post("/api/threads/t/restore", &json!({"rev": 3})).await.expect(200);
        assert_eq!(restored["rev"], json!(8));
        let now = server.workspace("t").await;
        assert_eq!(restored["workspace"], now);
        assert_eq!(now["objective"], at3["objective"]);
        assert_eq!(now["todos"], at3["todos"], "steps come back with their ids");
        assert_eq!(now["preferences"], at3["preferences"], "locks come back too");
        assert_eq!(now["artifacts"].as_array().unwrap().len(), 1, "artifacts are never removed");
        let frame = events.next(WAIT).await;
        assert_eq!(frame.event, "workspace");
        assert_eq!(frame.data, json!({"panels": ["objective", "plan", "preferences"], "source": "user"}));
        let newest = &history(&server, "t").await[0];
        assert_eq!(newest["restored_from"], json!(3));
        assert_eq!(newest["source"], json!("user"));
        assert_eq!(newest["panels"], json!(["objective", "plan", "preferences"]));

        // Restoring what is already there makes no revision.
        let again = server.post("/api/threads/t/restore", &json!({"rev": 3})).await.expect(200);
        assert_eq!(again["rev"], json!(8));
        // One panel only.
        let one = server.post("/api/threads/t/restore", &json!({"rev": 5, "panels": ["objective"]})).await.expect(200);
        assert_eq!(one["rev"], json!(9));
        assert_eq!(one["workspace"]["objective"], json!("Second"));
        assert_eq!(one["workspace"]["todos"], at3["todos"]);
        teardown(tdb, server).await;
    }

    async fn forks_start_from_a_revision_and_go_their_own_way(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("src").await;
        server.tool_ok("src", "set_objective", why(json!({"objective": "Shared"}))).await;
        server.tool_ok("src", "add_todos", why(json!({"steps": [{"text": "A"}, {"text": "A1", "depth": 1}]}))).await;
        server.tool_ok("src", "toggle_todos", why(json!({"indices": [2]}))).await;
        put(&server, "/api/threads/src/document", json!({"content": "Body", "title": "Doc"})).await.expect(200);
        server.post("/api/threads/src/preferences", &json!({"title": "Keep", "locked": true})).await.expect(201);
        let chart = json!({"chart_type": "bar", "title": "C", "data": {"labels": ["a"], "series": [{"name": "s", "values": [1]}]}});
        server.tool_ok("src", "chart_generator", why(chart)).await;
        server.tool_ok("src", "set_objective", why(json!({"objective": "Later"}))).await;

        let fork = server.post("/api/threads/src/fork", &json!({"at": 6, "id": "f", "title": "Try B"})).await.expect(201);
        assert_eq!(fork["id"], json!("f"));
        assert_eq!(fork["title"], json!("Try B"));
        assert_eq!(fork["forked_from"], json!({"thread_id": "src", "rev": 6}));
        let at6 = server.get("/api/threads/src/workspace?at=6").await.expect(200);
        let forked = server.workspace("f").await;
        assert_eq!(without_ids(forked.clone())["todos"], without_ids(at6.clone())["todos"]);
        assert_eq!(without_ids(forked.clone()), without_ids(at6.clone()));
        let fork_history = history(&server, "f").await;
        assert_eq!(fork_history.len(), 1);
        assert_eq!(fork_history[0]["summary"], json!("forked from thread `src` at revision 6"));
        assert_eq!(server.get("/api/threads/f").await.expect(200)["forked_from"]["rev"], json!(6));

        // Independent from here on.
        server.tool_ok("f", "set_objective", why(json!({"objective": "Fork's own"}))).await;
        server.tool_ok("src", "add_todos", why(json!({"steps": [{"text": "Only in src"}]}))).await;
        assert_eq!(server.workspace("src").await["objective"], json!("Later"));
        assert_eq!(server.workspace("f").await["todos"].as_array().unwrap().len(), 2);

        // The default is the latest revision and a fresh id and title.
        let latest = server.post("/api/threads/src/fork", &json!({})).await.expect(201);
        assert_eq!(latest["forked_from"]["rev"], json!(8));
        assert_eq!(latest["title"], json!("thread src (fork)"));
        // Errors change nothing.
        let threads = server.get("/api/threads").await.expect(200).as_array().unwrap().len();
        server.post("/api/threads/src/fork", &json!({"id": "f"})).await.error(409);
        server.post("/api/threads/src/fork", &json!({"at": 99})).await.error(404);
        server.post("/api/threads/src/fork", &json!({"id": "bad id"})).await.error(400);
        server.post("/api/threads/ghost/fork", &json!({})).await.error(404);
        server.post("/api/threads/src/fork", &json!({"title": ""})).await.error(400);
        assert_eq!(server.get("/api/threads").await.expect(200).as_array().unwrap().len(), threads);
        teardown(tdb, server).await;
    }

    async fn recordings_round_trip_and_broken_ones_are_refused_whole(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("rec").await;
        server.tool_ok("rec", "set_objective", why(json!({"objective": "Record me"}))).await;
        server.tool_ok("rec", "add_todos", why(json!({"steps": [{"text": "A"}, {"text": "B"}]}))).await;
        server.tool_ok("rec", "toggle_todos", why(json!({"indices": [1]}))).await;
        server.tool_ok("rec", "append_to_document", why(json!({"text": "Hello 👋\n"}))).await;
        put(&server, "/api/threads/rec/document", json!({"content": "Hello 👋\nWorld\n", "title": "T"})).await.expect(200);
        server.post("/api/threads/rec/preferences", &json!({"title": "Locked", "locked": true})).await.expect(201);
        let chart = json!({"chart_type": "line", "title": "L", "data": {"labels": ["a", "b"], "series": [{"name": "s", "values": [1, 2]}]}});
        server.tool_ok("rec", "chart_generator", why(chart)).await;
        server.tool_ok("rec", "remove_todos", why(json!({"indices": [2]}))).await;
        server.post("/api/threads/rec/restore", &json!({"rev": 2, "panels": ["plan"]})).await.expect(200);

        let recording = export(&server, "rec").await;
        let first: Value = serde_json::from_str(recording.lines().next().unwrap()).unwrap();
        assert_eq!(first["type"], json!("thread"));
        assert_eq!(first["format"], json!("haico-recording/1"));
        assert_eq!(first["id"], json!("rec"));

        let (status, copy) = import(&server, &recording, "?id=copy").await;
        assert_eq!(status, 201, "{copy}");
        assert_eq!(copy["id"], json!("copy"));
        let revisions = history(&server, "rec").await;
        assert_eq!(history(&server, "copy").await.len(), revisions.len());
        for rev in 0..=revisions.len() as i64 {
            let a = server.get(&format!("/api/threads/rec/workspace?at={rev}")).await.expect(200);
            let b = server.get(&format!("/api/threads/copy/workspace?at={rev}")).await.expect(200);
            assert_eq!(without_ids(a), without_ids(b), "revision {rev}");
        }
        assert_eq!(without_ids(server.workspace("rec").await), without_ids(server.workspace("copy").await));
        assert_eq!(comparable(&export(&server, "copy").await), comparable(&recording));
        // The copy lives on: a new change becomes its next revision.
        server.tool_ok("copy", "toggle_todos", why(json!({"indices": [1]}))).await;
        assert_eq!(history(&server, "copy").await.len(), revisions.len() + 1);
        // Without an id the import gets a fresh one; a taken id is a 409.
        let (status, fresh) = import(&server, &recording, "").await;
        assert_eq!(status, 201);
        assert_ne!(fresh["id"], json!("rec"));
        assert_eq!(import(&server, &recording, "?id=copy").await.0, 409);

        // Broken recordings: refused whole, with the line and the reason; nothing written.
        let threads = server.get("/api/threads").await.expect(200).as_array().unwrap().len();
        let lines: Vec<&str> = recording.lines().collect();
        let with_line = |index: usize, text: &str| -> String {
            let mut lines = lines.clone();
            lines[index] = text;
            lines.join("\n")
        };
        let revision_line = lines.iter().position(|l| l.contains("\"type\":\"revision\"")).unwrap();
        let last_rev = lines.iter().filter(|l| l.contains("\"type\":\"revision\"")).count();
        let beyond = |change: Value| -> String {
            let line = json!({"type": "revision", "rev": last_rev + 1, "at": "2026-01-01T00:00:00Z",
                "source": "user", "by": null, "turn_index": null, "thread_turn": 0, "tool": null,
                "action_and_reasoning": null, "panels": [change["panel"].clone()], "summary": "x",
                "restored_from": null, "reverted_turn": null, "changes": [change]});
            format!("{recording}{line}\n")
        };
        let cases = [
            (with_line(0, r#"{"type":"thread","format":"haico-recording/9","id":"x","title":"t","created_at":"2026-01-01T00:00:00Z","forked_from":null}"#), "line 1"),
            (with_line(2, "{not json"), "line 3"),
            (recording.clone() + r#"{"type":"message","turn_index":77,"role":"user","content":"x","at":"2026-01-01T00:00:00Z","by":null}"#, "turn 77"),
            (lines[..revision_line].join("\n") + "\n" + &lines[revision_line + 1..].join("\n"), "without gaps"),
            (String::new(), "line 1"),
            // What no edit could make: past the workspace's limits.
            // … worded as every other path words the rule.
            (beyond(json!({"panel": "objective", "whole": true, "data": "o".repeat(haico::workspace::MAX_OBJECTIVE_CHARS + 1)})), "the objective change: `objective` is 501 characters long; the limit is 500"),
            (beyond(json!({"panel": "plan", "whole": true, "data": [{"id": 1, "text": "deep", "depth": 99, "done": false}]})), "`data[0].depth` is 99; the plan nests at most"),
            (beyond(json!({"panel": "plan", "whole": false, "data": [{"op": "add", "items": [{"id": 9, "text": " ", "depth": 0, "done": false}]}]})), "`data[0].items[0].text` must not be empty"),
            (beyond(json!({"panel": "preferences", "whole": true, "data": [{"id": 3, "title": "  ", "subtitle": null, "kind": "hard", "locked": false}]})), "`data[0].title` must not be empty"),
        ];
        for (body, expected) in cases {
            let (status, answer) = import(&server, &body, "?id=broken").await;
            assert_eq!(status, 400, "{answer}");
            let error = answer["error"].as_str().unwrap();
            assert!(error.contains(expected), "{error} should mention {expected}");
        }
        // An artifact is a chart that passes the chart rule, refused with its line otherwise.
        let artifact_line = recording.lines().count() + 1;
        let with_artifact = |artifact_type: &str, payload: Value| -> String {
            let line = json!({"type": "artifact", "id": 99, "artifact_type": artifact_type, "title": "T",
                "payload": payload, "turn_index": 0, "rev": 1, "at": "2026-01-01T00:00:00Z"});
            format!("{recording}{line}\n")
        };
        let chart = |labels: Value, values: Value| json!({"title": "T", "description": null,
            "data": {"labels": labels, "series": [{"name": "s", "values": values}]},
            "x_axis_title": null, "y_axis_title": null, "style": {}});
        let artifact_cases = [
            (with_artifact("pie_chart", chart(json!(["a", "b"]), json!([1, -2]))), "`data.series[0].values[1]` is negative"),
            (with_artifact("bar_chart", chart(json!([]), json!([]))), "`data.labels` is empty"),
            (with_artifact("bar_chart", json!({})), "is not a chart"),
            (with_artifact("note", chart(json!(["a"]), json!([1]))), "artifact type \"note\" is not one haico makes"),
        ];
        for (body, expected) in artifact_cases {
            let (status, answer) = import(&server, &body, "?id=broken").await;
            assert_eq!(status, 400, "{answer}");
            let error = answer["error"].as_str().unwrap();
            assert!(error.starts_with(&format!("line {artifact_line}: ")) && error.contains(expected), "{error} should mention {expected}");
        }
        let refused = server.client.post(server.url("/api/threads/import")).json(&json!({})).send().await.unwrap();
        assert_eq!(refused.status(), 415);
        server.get("/api/threads/broken").await.error(404);
        assert_eq!(server.get("/api/threads").await.expect(200).as_array().unwrap().len(), threads);
        server.get("/api/threads/ghost/export").await.error(404);
        teardown(tdb, server).await;
    }
}
