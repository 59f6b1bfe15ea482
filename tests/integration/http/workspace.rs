//! The workspace panels on the user path over HTTP — objective, document (with versions),
//! todos (stable ids), artifacts and chart.svg — on SQLite and PostgreSQL, against a real
//! server, and how they interplay with the agent's tools.

use crate::common;

use std::collections::BTreeSet;

use common::server::{Reply, TestServer, key_set, keys, setup, teardown};
use common::tid;
use reqwest::Method;
use serde_json::{Value, json};

async fn put(server: &TestServer, path: &str, body: &Value) -> Reply {
    server.request(Method::PUT, path, Some(body)).await
}

/// The thread row and its workspace, for "nothing changed" checks.
async fn state(server: &TestServer, thread: &str) -> (Value, Value) {
    let row = server
        .get(&format!("/api/threads/{thread}"))
        .await
        .expect(200);
    (row, server.workspace(thread).await)
}

fn says(action: &str) -> Value {
    json!({ "action_and_reasoning": action })
}

fn with_reason(mut args: Value) -> Value {
    args["action_and_reasoning"] = json!("Test step.");
    args
}

/// The plan as the agent sees it.
async fn plan_text(server: &TestServer, thread: &str) -> String {
    server
        .tool_ok(thread, "list_todos", says("Look at the plan."))
        .await
}

/// (text, depth, done) of every step, in order.
async fn plan(server: &TestServer, thread: &str) -> Vec<(String, i64, bool)> {
    let list = server
        .get(&format!("/api/threads/{thread}/todos"))
        .await
        .expect(200);
    list.as_array()
        .unwrap()
        .iter()
        .map(|t| {
            assert_eq!(keys(t), key_set(&["id", "text", "depth", "done"]), "{t}");
            (
                t["text"].as_str().unwrap().to_string(),
                t["depth"].as_i64().unwrap(),
                t["done"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn steps(list: &[(&str, i64, bool)]) -> Vec<(String, i64, bool)> {
    list.iter()
        .map(|(t, d, x)| (t.to_string(), *d, *x))
        .collect()
}

async fn add_todo(server: &TestServer, thread: &str, body: Value) -> Value {
    let todo = server
        .post(&format!("/api/threads/{thread}/todos"), &body)
        .await
        .expect(201);
    assert_eq!(
        keys(&todo),
        key_set(&["id", "text", "depth", "done"]),
        "{todo}"
    );
    todo
}

fn chart_args(chart_type: &str, title: &str, labels: Value, series: Value, style: Value) -> Value {
    json!({
        "action_and_reasoning": "Draw it.",
        "chart_type": chart_type,
        "title": title,
        "data": {"labels": labels, "series": series},
        "x_axis_title": "X & <axis>",
        "y_axis_title": "Y",
        "style": style
    })
}

/// Makes a chart through the tools endpoint; returns its artifact id.
async fn make_chart(server: &TestServer, thread: &str, args: Value) -> i64 {
    let env = server.tool(thread, "chart_generator", args).await;
    assert_eq!(env["success"], json!(true), "{env}");
    env["artifact_id"].as_i64().unwrap()
}

async fn simple_chart(server: &TestServer, thread: &str, chart_type: &str, title: &str) -> i64 {
    let series = if chart_type == "pie" {
        json!([{"name": "s", "values": [1, 2]}])
    } else {
        json!([{"name": "s", "values": [1, -2]}])
    };
    make_chart(
        server,
        thread,
        chart_args(chart_type, title, json!(["a", "b"]), series, json!({})),
    )
    .await
}

/// GETs a chart.svg: status, content type, headers and body text.
async fn get_svg(server: &TestServer, path: &str) -> (u16, reqwest::header::HeaderMap, String) {
    let resp = server.client.get(server.url(path)).send().await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    (status, headers, resp.text().await.unwrap())
}

/// GETs a binary body (a chart.png): status, headers and bytes.
async fn get_bytes(server: &TestServer, path: &str) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let resp = server.client.get(server.url(path)).send().await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    (status, headers, resp.bytes().await.unwrap().to_vec())
}

/// The stored order keys of a thread's steps as ranks (see [`common::step_ranks`]).
async fn positions(db: &haico::store::Database, thread: &str) -> Vec<i64> {
    common::step_ranks(db, thread).await
}

/// The events logged for `thread` since `seen` (which moves past them), as (name, data).
async fn new_events(
    db: &haico::store::Database,
    thread: &str,
    seen: &mut i64,
) -> Vec<(String, Value)> {
    let mut repo = db.begin_read().await.unwrap();
    let events = repo
        .events()
        .events_after(&tid(thread), *seen, 1000)
        .await
        .unwrap();
    repo.rollback().await.unwrap();
    if let Some(last) = events.last() {
        *seen = last.seq;
    }
    events
        .into_iter()
        .map(|e| (e.event, serde_json::from_str(&e.data).unwrap()))
        .collect()
}

backend_tests! {
    async fn objective_reads_and_writes(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("obj").await;
        let path = "/api/threads/obj/objective";
        assert_eq!(server.get(path).await.expect(200), json!({"objective": null}));

        // One line, like the tool: whitespace runs and line breaks collapse.
        let set = put(&server, path, &json!({"objective": "  Plan a\n  trip\tto Rome  "})).await.expect(200);
        assert_eq!(set, json!({"objective": "Plan a trip to Rome"}));
        assert_eq!(server.get(path).await.expect(200), set);
        assert_eq!(server.workspace("obj").await["objective"], json!("Plan a trip to Rome"));

        let longest = "x".repeat(500);
        put(&server, path, &json!({"objective": longest})).await.expect(200);
        // The agent and the user write the same panel.
        server.tool_ok("obj", "set_objective", with_reason(json!({"objective": "Agent goal"}))).await;
        assert_eq!(server.get(path).await.expect(200), json!({"objective": "Agent goal"}));

        // Bad input: 4xx JSON, nothing written.
        let before = state(&server, "obj").await;
        let too_long = "x".repeat(501);
        for (body, status) in [
            (json!({"objective": ""}), 400),
            (json!({"objective": " \n\t "}), 400),
            (json!({"objective": too_long}), 400),
            (json!({"objective": null}), 422),
            (json!({"objective": 5}), 422),
            (json!({}), 422),
            (json!({"objective": "ok", "extra": 1}), 422),
            (json!("objective"), 422),
        ] {
            let text = put(&server, path, &body).await.error(status);
            assert!(!text.is_empty());
        }
        server.send_raw(Method::PUT, path, Some("application/json"), "{nope").await.error(400);
        server.send_raw(Method::PUT, path, None, r#"{"objective":"x"}"#).await.error(415);
        assert_eq!(state(&server, "obj").await, before);

        // Unknown and invalid threads.
        server.get("/api/threads/nope/objective").await.error(404);
        put(&server, "/api/threads/nope/objective", &json!({"objective": "x"})).await.error(404);
        server.get("/api/threads/a%20b/objective").await.error(400);
        server.delete(path).await.error(405);
        teardown(tdb, server).await;
    }

    async fn document_reads_writes_and_checks_versions(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("doc").await;
        let path = "/api/threads/doc/document";
        assert_eq!(server.get(path).await.expect(200), json!({"title": "", "content": "", "version": 0}));

        let v1 = put(&server, path, &json!({"content": "# Trip\nDay 1", "title": " Itinerary "})).await.expect(200);
        assert_eq!(v1, json!({"title": "Itinerary", "content": "# Trip\nDay 1", "version": 1}));
        assert_eq!(server.get(path).await.expect(200), v1);
        assert_eq!(server.workspace("doc").await["document"], v1);

        // Without a title the title stays; an empty body is allowed.
        let v2 = put(&server, path, &json!({"content": ""})).await.expect(200);
        assert_eq!(v2, json!({"title": "Itinerary", "content": "", "version": 2}));
        let v3 = put(&server, path, &json!({"content": "Body 3", "expected_version": 2, "title": null})).await.expect(200);
        assert_eq!(v3, json!({"title": "Itinerary", "content": "Body 3", "version": 3}));

        // A stale version: 409 with the current document, nothing written.
        let before = state(&server, "doc").await;
        let reply = put(&server, path, &json!({"content": "lost", "title": "Lost", "expected_version": 2})).await;
        assert_eq!(reply.status.as_u16(), 409, "{}", reply.body);
        assert!(reply.content_type.as_deref().unwrap().starts_with("application/json"));
        assert_eq!(keys(&reply.body), key_set(&["error", "document"]));
        assert!(reply.body["error"].as_str().unwrap().contains("version 3"), "{}", reply.body);
        assert_eq!(reply.body["document"], v3);
        assert_eq!(state(&server, "doc").await, before);

        // The agent writes meanwhile: the user's next write with the old version conflicts and
        // sees the agent's text; with the new version it goes through.
        server.tool_ok("doc", "append_to_document", with_reason(json!({"text": "\nby the agent"}))).await;
        let reply = put(&server, path, &json!({"content": "mine", "expected_version": 3})).await;
        assert_eq!(reply.status.as_u16(), 409);
        assert_eq!(reply.body["document"], json!({"title": "Itinerary", "content": "Body 3\nby the agent", "version": 4}));
        let v5 = put(&server, path, &json!({"content": "merged", "expected_version": 4})).await.expect(200);
        assert_eq!(v5["version"], json!(5));
        // A future version is as stale as a past one.
        let reply = put(&server, path, &json!({"content": "x", "expected_version": 9})).await;
        assert_eq!(reply.status.as_u16(), 409);
        assert_eq!(reply.body["document"], v5);

        // expected_version 0 means "there is no document yet".
        server.create_thread("fresh").await;
        let fresh = "/api/threads/fresh/document";
        let reply = put(&server, fresh, &json!({"content": "x", "expected_version": 1})).await;
        assert_eq!(reply.status.as_u16(), 409);
        assert_eq!(reply.body["document"], json!({"title": "", "content": "", "version": 0}));
        assert_eq!(server.workspace("fresh").await["document"], Value::Null);
        let first = put(&server, fresh, &json!({"content": "first", "expected_version": 0})).await.expect(200);
        assert_eq!(first, json!({"title": "", "content": "first", "version": 1}));
        let reply = put(&server, fresh, &json!({"content": "second", "expected_version": 0})).await;
        assert_eq!(reply.status.as_u16(), 409);
        assert_eq!(reply.body["document"], first);

        // Bad input.
        let before = state(&server, "doc").await;
        let long_title = "t".repeat(301);
        for (body, status) in [
            (json!({"content": "x", "expected_version": -1}), 400),
            (json!({"content": "x", "title": long_title}), 400),
            (json!({"title": "no content"}), 422),
            (json!({"content": 1}), 422),
            (json!({"content": "x", "expected_version": "3"}), 422),
            (json!({"content": "x", "version": 3}), 422),
        ] {
            put(&server, path, &body).await.error(status);
        }
        let huge = "x".repeat(haico::workspace::MAX_DOCUMENT_CHARS + 1);
        let text = put(&server, path, &json!({"content": huge})).await.error(400);
        assert!(text.contains("content"), "{text}");
        assert_eq!(state(&server, "doc").await, before);

        server.get("/api/threads/nope/document").await.error(404);
        put(&server, "/api/threads/nope/document", &json!({"content": "x"})).await.error(404);
        put(&server, "/api/threads/nope/document", &json!({"content": "x", "expected_version": 0})).await.error(404);
        teardown(tdb, server).await;
    }

    async fn concurrent_document_writers_with_one_version_one_wins(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("race").await;
        let path = "/api/threads/race/document";
        // Round 0 races on "no document yet" (the insert path); later rounds on updates.
        for round in 0..4i64 {
            // Each round starts from the version the previous winner made.
            let version = round;
            let writers = 6;
            let requests = (0..writers).map(|i| {
                let client = server.client.clone();
                let url = server.url(path);
                let content = format!("round {round} writer {i}");
                async move {
                    let resp = client
                        .put(url)
                        .json(&json!({"content": content, "expected_version": version}))
                        .send()
                        .await
                        .unwrap();
                    (content, TestServer::read(resp).await)
                }
            });
            let replies = futures::future::join_all(requests).await;
            let winners: Vec<&(String, Reply)> = replies.iter().filter(|(_, r)| r.status.as_u16() == 200).collect();
            assert_eq!(winners.len(), 1, "round {round}: {replies:?}");
            let (winning_content, winner) = winners[0];
            assert_eq!(winner.body["version"], json!(version + 1));
            assert_eq!(winner.body["content"], json!(winning_content));
            for (_, reply) in replies.iter().filter(|(_, r)| r.status.as_u16() != 200) {
                assert_eq!(reply.status.as_u16(), 409, "{}", reply.body);
                assert_eq!(reply.body["document"], winner.body, "the loser sees the winner's text");
            }
            let stored = server.get(path).await.expect(200);
            assert_eq!(&stored, &winner.body);
        }
        teardown(tdb, server).await;
    }

    async fn todos_nest_by_id_and_stay_dense(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("plan").await;
        let base = "/api/threads/plan/todos";
        assert_eq!(server.get(base).await.expect(200), json!([]));

        let book = add_todo(&server, "plan", json!({"text": "  Book  "})).await;
        assert_eq!(book["text"], json!("Book"));
        assert_eq!((book["depth"].clone(), book["done"].clone()), (json!(0), json!(false)));
        let pack = add_todo(&server, "plan", json!({"text": "Pack"})).await;
        let book_id = book["id"].as_i64().unwrap();
        let flights = add_todo(&server, "plan", json!({"text": "Flights", "parent_id": book_id})).await;
        assert_eq!(flights["depth"], json!(1));
        let hotel = add_todo(&server, "plan", json!({"text": "Hotel", "parent_id": book_id})).await;
        let flights_id = flights["id"].as_i64().unwrap();
        let seat = add_todo(&server, "plan", json!({"text": "Window seat", "parent_id": flights_id})).await;
        assert_eq!(seat["depth"], json!(2));
        // after_id: the next sibling, after the step's own sub-steps.
        let train = add_todo(&server, "plan", json!({"text": "Train", "after_id": flights_id})).await;
        assert_eq!(train["depth"], json!(1));
        // depth at the end: at most one deeper than the last step.
        let sub = add_todo(&server, "plan", json!({"text": "Sub of pack", "depth": 1})).await;
        assert_eq!(sub["depth"], json!(1));
        let ids: BTreeSet<i64> = [&book, &pack, &flights, &hotel, &seat, &train, &sub]
            .iter()
            .map(|t| t["id"].as_i64().unwrap())
            .collect();
        assert_eq!(ids.len(), 7, "ids are unique");

        assert_eq!(
            plan(&server, "plan").await,
            steps(&[
                ("Book", 0, false), ("Flights", 1, false), ("Window seat", 2, false), ("Train", 1, false),
                ("Hotel", 1, false), ("Pack", 0, false), ("Sub of pack", 1, false),
            ])
        );
        // The agent sees the same outline, numbered 1..n.
        assert_eq!(
            plan_text(&server, "plan").await,
            "1. [ ] Book\n  2. [ ] Flights\n    3. [ ] Window seat\n  4. [ ] Train\n  5. [ ] Hotel\n\
             6. [ ] Pack\n  7. [ ] Sub of pack"
        );

        // PATCH by id: text, done, both.
        let flights_path = format!("{base}/{flights_id}");
        let done = server.patch(&flights_path, &json!({"done": true})).await.expect(200);
        assert_eq!(done, json!({"id": flights_id, "text": "Flights", "depth": 1, "done": true}));
        let renamed = server.patch(&flights_path, &json!({"text": " Flights to Rome "})).await.expect(200);
        assert_eq!(renamed["text"], json!("Flights to Rome"));
        assert_eq!(renamed["done"], json!(true));
        let both = server.patch(&format!("{base}/{}", pack["id"]), &json!({"text": "Pack bags", "done": false})).await.expect(200);
        assert_eq!(both["text"], json!("Pack bags"));
        assert!(plan_text(&server, "plan").await.contains("  2. [x] Flights to Rome"));

        // The agent ticks by index; the user's ids still name the same steps.
        server.tool_ok("plan", "toggle_todos", with_reason(json!({"indices": [1]}))).await;
        let list = server.get(base).await.expect(200);
        assert_eq!(list[0], json!({"id": book_id, "text": "Book", "depth": 0, "done": true}));

        // DELETE removes the step and its deeper followers only.
        assert_eq!(server.delete(&flights_path).await.expect(204), Value::Null);
        assert_eq!(
            plan(&server, "plan").await,
            steps(&[("Book", 0, true), ("Train", 1, false), ("Hotel", 1, false), ("Pack bags", 0, false), ("Sub of pack", 1, false)])
        );
        assert_eq!(
            plan_text(&server, "plan").await,
            "1. [x] Book\n  2. [ ] Train\n  3. [ ] Hotel\n4. [ ] Pack bags\n  5. [ ] Sub of pack"
        );
        server.delete(&flights_path).await.error(404);
        server.patch(&format!("{base}/{}", seat["id"]), &json!({"done": true})).await.error(404);

        // Positions are dense: the agent's indices after the user's edits hit the right steps.
        let summary = server.tool_ok("plan", "remove_todos", with_reason(json!({"indices": [2]}))).await;
        assert!(summary.contains("\"Train\""), "{summary}");
        server.tool_ok("plan", "add_todos", with_reason(json!({"steps": [{"text": "Insurance"}], "parent_index": 1}))).await;
        let later = add_todo(&server, "plan", json!({"text": "Taxi", "parent_id": book_id})).await;
        assert_eq!(later["depth"], json!(1));
        assert_eq!(
            plan_text(&server, "plan").await,
            "1. [x] Book\n  2. [ ] Hotel\n  3. [ ] Insurance\n  4. [ ] Taxi\n5. [ ] Pack bags\n  6. [ ] Sub of pack"
        );
        // Deleting a whole top-level subtree, then the last step.
        server.delete(&format!("{base}/{book_id}")).await.expect(204);
        server.delete(&format!("{base}/{}", sub["id"])).await.expect(204);
        assert_eq!(plan(&server, "plan").await, steps(&[("Pack bags", 0, false)]));
        assert_eq!(plan_text(&server, "plan").await, "1. [ ] Pack bags");
        // Appending after deletions lands at the end, numbered densely.
        add_todo(&server, "plan", json!({"text": "Leave"})).await;
        assert_eq!(plan_text(&server, "plan").await, "1. [ ] Pack bags\n2. [ ] Leave");
        assert_eq!(server.workspace("plan").await["todos"], server.get(base).await.expect(200));
        teardown(tdb, server).await;
    }

    async fn concurrent_user_and_agent_plan_edits_keep_positions_dense(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("busy").await;
        let roots: Vec<i64> = {
            let mut ids = Vec::new();
            for i in 0..4 {
                let todo = add_todo(&server, "busy", json!({"text": format!("root {i}")})).await;
                ids.push(todo["id"].as_i64().unwrap());
            }
            ids
        };
        let doomed = add_todo(&server, "busy", json!({"text": "doomed", "parent_id": roots[3]})).await;
        // User inserts under every root, the agent appends and nests by index, and the user
        // deletes a sub-step: all at once.
        let user = (0..12).map(|i| {
            let client = server.client.clone();
            let url = server.url("/api/threads/busy/todos");
            let parent = roots[i % roots.len()];
            async move {
                let resp = client.post(url).json(&json!({"text": format!("user {i}"), "parent_id": parent})).send().await.unwrap();
                assert_eq!(resp.status().as_u16(), 201);
            }
        });
        let agent = (0..8).map(|i| {
            let client = server.client.clone();
            let url = server.url("/api/threads/busy/tools/add_todos");
            let args = if i % 2 == 0 {
                with_reason(json!({"steps": [{"text": format!("agent {i}")}, {"text": format!("agent {i} sub"), "depth": 1}]}))
            } else {
                with_reason(json!({"steps": [{"text": format!("agent {i}")}], "parent_index": 1}))
            };
            async move {
                let resp = client.post(url).json(&args).send().await.unwrap();
                let env: Value = resp.json().await.unwrap();
                assert_eq!(env["success"], json!(true), "{env}");
            }
        });
        let delete = {
            let client = server.client.clone();
            let url = server.url(&format!("/api/threads/busy/todos/{}", doomed["id"]));
            async move {
                let resp = client.delete(url).send().await.unwrap();
                assert_eq!(resp.status().as_u16(), 204);
            }
        };
        let user = futures::future::join_all(user);
        let agent = futures::future::join_all(agent);
        tokio::join!(user, agent, delete);

        // 4 roots + 12 user steps + 4×2 + 4×1 agent steps; the doomed one is gone.
        let steps = plan(&server, "busy").await;
        assert_eq!(steps.len(), 4 + 12 + 8 + 4, "{steps:?}");
        assert_eq!(positions(&tdb.db, "busy").await, (0..28).collect::<Vec<i64>>());
        // Still an outline: starts at depth 0, never more than one level deeper than before.
        assert_eq!(steps[0].1, 0);
        for pair in steps.windows(2) {
            assert!(pair[1].1 <= pair[0].1 + 1, "{steps:?}");
        }
        // Every user step sits inside its root's subtree.
        for (i, root) in roots.iter().enumerate() {
            let list = server.get("/api/threads/busy/todos").await.expect(200);
            let list = list.as_array().unwrap();
            let start = list.iter().position(|t| t["id"] == json!(root)).unwrap();
            let end = list[start + 1..]
                .iter()
                .position(|t| t["depth"] == json!(0))
                .map_or(list.len(), |p| start + 1 + p);
            let inside: Vec<&str> = list[start + 1..end].iter().map(|t| t["text"].as_str().unwrap()).collect();
            for j in (0..12).filter(|j| j % roots.len() == i) {
                assert!(inside.contains(&format!("user {j}").as_str()), "root {i}: {inside:?}");
            }
        }
        let text = plan_text(&server, "busy").await;
        let numbers: Vec<usize> = text
            .lines()
            .map(|l| l.trim_start().split('.').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(numbers, (1..=28).collect::<Vec<usize>>());
        teardown(tdb, server).await;
    }

    async fn user_writes_are_announced_once_and_failures_not_at_all(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("ev").await;
        let db = &tdb.db;
        let mut seen = 0;
        new_events(db, "ev", &mut seen).await;
        let user = |panel: &str| vec![("workspace".to_string(), json!({"panels": [panel], "source": "user"}))];

        put(&server, "/api/threads/ev/objective", &json!({"objective": "Goal"})).await.expect(200);
        assert_eq!(new_events(db, "ev", &mut seen).await, user("objective"));
        put(&server, "/api/threads/ev/document", &json!({"content": "x", "expected_version": 0})).await.expect(200);
        assert_eq!(new_events(db, "ev", &mut seen).await, user("document"));
        let todo = add_todo(&server, "ev", json!({"text": "Step"})).await;
        assert_eq!(new_events(db, "ev", &mut seen).await, user("plan"));
        let todo_path = format!("/api/threads/ev/todos/{}", todo["id"]);
        server.patch(&todo_path, &json!({"done": true})).await.expect(200);
        assert_eq!(new_events(db, "ev", &mut seen).await, user("plan"));

        // Reads, rejected writes and conflicts announce nothing.
        server.get("/api/threads/ev/objective").await.expect(200);
        server.get("/api/threads/ev/document").await.expect(200);
        server.get("/api/threads/ev/todos").await.expect(200);
        server.get("/api/threads/ev/artifacts").await.expect(200);
        put(&server, "/api/threads/ev/objective", &json!({"objective": ""})).await.error(400);
        let conflict = put(&server, "/api/threads/ev/document", &json!({"content": "y", "expected_version": 0})).await;
        assert_eq!(conflict.status.as_u16(), 409);
        server.post("/api/threads/ev/todos", &json!({"text": "x", "depth": 5})).await.error(400);
        server.patch("/api/threads/ev/todos/999999", &json!({"done": true})).await.error(404);
        server.delete("/api/threads/ev/todos/999999").await.error(404);
        assert_eq!(new_events(db, "ev", &mut seen).await, vec![]);

        server.delete(&todo_path).await.expect(204);
        assert_eq!(new_events(db, "ev", &mut seen).await, user("plan"));
        teardown(tdb, server).await;
    }

    async fn todo_bad_input_changes_nothing(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("bad").await;
        server.create_thread("other").await;
        let base = "/api/threads/bad/todos";
        let top = add_todo(&server, "bad", json!({"text": "Top"})).await;
        let top_id = top["id"].as_i64().unwrap();
        let foreign = add_todo(&server, "other", json!({"text": "Elsewhere"})).await;
        let foreign_id = foreign["id"].as_i64().unwrap();

        let before = state(&server, "bad").await;
        let long = "x".repeat(2001);
        for (body, status) in [
            (json!({"text": ""}), 400),
            (json!({"text": "   "}), 400),
            (json!({"text": long}), 400),
            (json!({"text": "x", "parent_id": top_id, "after_id": top_id}), 400),
            (json!({"text": "x", "parent_id": top_id, "depth": 1}), 400),
            (json!({"text": "x", "after_id": top_id, "depth": 0}), 400),
            (json!({"text": "x", "depth": -1}), 400),
            (json!({"text": "x", "depth": 13}), 400),
            (json!({"text": "x", "depth": 2}), 400),
            (json!({"text": "x", "parent_id": 999_999}), 400),
            (json!({"text": "x", "after_id": foreign_id}), 400),
            (json!({"text": "x", "parent_id": foreign_id}), 400),
            (json!({}), 422),
            (json!({"text": 3}), 422),
            (json!({"text": "x", "position": 1}), 422),
            (json!({"text": "x", "parent_id": "1"}), 422),
        ] {
            let text = server.post(base, &body).await.error(status);
            assert!(!text.is_empty(), "{body}");
        }
        let top_path = format!("{base}/{top_id}");
        for (body, status) in [
            (json!({}), 400),
            (json!({"text": ""}), 400),
            (json!({"text": "ok", "done": "yes"}), 422),
            (json!({"depth": 1}), 422),
        ] {
            server.patch(&top_path, &body).await.error(status);
        }
        server.patch(&format!("{base}/{foreign_id}"), &json!({"done": true})).await.error(404);
        server.patch(&format!("{base}/424242"), &json!({"done": true})).await.error(404);
        server.delete(&format!("{base}/{foreign_id}")).await.error(404);
        server.delete(&format!("{base}/424242")).await.error(404);
        server.delete(&format!("{base}/abc")).await.error(400);
        server.patch(&format!("{base}/abc"), &json!({"done": true})).await.error(400);
        assert_eq!(state(&server, "bad").await, before);
        assert_eq!(plan(&server, "other").await, steps(&[("Elsewhere", 0, false)]));

        // A new thread's first step must be top level.
        server.create_thread("empty").await;
        server.post("/api/threads/empty/todos", &json!({"text": "x", "depth": 1})).await.error(400);
        assert_eq!(plan(&server, "empty").await, vec![]);

        // The outline nests at most 12 levels deep.
        let mut parent = top_id;
        for depth in 1..=12 {
            let child = add_todo(&server, "bad", json!({"text": format!("level {depth}"), "parent_id": parent})).await;
            assert_eq!(child["depth"], json!(depth));
            parent = child["id"].as_i64().unwrap();
        }
        let before = state(&server, "bad").await;
        server.post(base, &json!({"text": "too deep", "parent_id": parent})).await.error(400);
        server.post(base, &json!({"text": "too deep", "depth": 13})).await.error(400);
        assert_eq!(state(&server, "bad").await, before);
        // Removing the top removes all 13.
        server.delete(&top_path).await.expect(204);
        assert_eq!(plan(&server, "bad").await, vec![]);

        for path in ["/api/threads/nope/todos", "/api/threads/nope/todos/1"] {
            server.get("/api/threads/nope/todos").await.error(404);
            server.patch(path, &json!({"done": true})).await.error_any();
            server.delete(path).await.error_any();
        }
        server.post("/api/threads/nope/todos", &json!({"text": "x"})).await.error(404);
        server.patch("/api/threads/nope/todos/1", &json!({"done": true})).await.error(404);
        server.delete("/api/threads/nope/todos/1").await.error(404);
        server.get("/api/threads/a%20b/todos").await.error(400);
        teardown(tdb, server).await;
    }

    async fn artifacts_list_get_filter_and_limit(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("arts").await;
        server.create_thread("other").await;
        let bar = simple_chart(&server, "arts", "bar", "Bars").await;
        let line = simple_chart(&server, "arts", "line", "Lines").await;
        let pie = simple_chart(&server, "arts", "pie", "Pie").await;
        let bar2 = simple_chart(&server, "arts", "bar", "More bars").await;
        let foreign = simple_chart(&server, "other", "bar", "Not yours").await;

        let base = "/api/threads/arts/artifacts";
        let list = server.get(base).await.expect(200);
        let list = list.as_array().unwrap();
        let ids: Vec<i64> = list.iter().map(|a| a["id"].as_i64().unwrap()).collect();
        assert_eq!(ids, vec![bar2, pie, line, bar], "newest first, this thread only");
        for item in list {
            assert_eq!(keys(item), key_set(&["id", "artifact_type", "title", "turn_index", "created_at"]));
        }
        assert_eq!(list[0]["title"], json!("More bars"));
        assert_eq!(list[0]["artifact_type"], json!("bar_chart"));
        assert_eq!(list[0]["turn_index"], json!(0));
        assert_eq!(&server.workspace("arts").await["artifacts"], &Value::Array(list.clone()));

        let only_bars = server.get(&format!("{base}?artifact_type=bar_chart")).await.expect(200);
        let ids: Vec<i64> = only_bars.as_array().unwrap().iter().map(|a| a["id"].as_i64().unwrap()).collect();
        assert_eq!(ids, vec![bar2, bar]);
        assert_eq!(server.get(&format!("{base}?artifact_type=table")).await.expect(200), json!([]));
        assert_eq!(server.get(&format!("{base}?artifact_type=")).await.expect(200).as_array().unwrap().len(), 4);
        let two = server.get(&format!("{base}?limit=2")).await.expect(200);
        let ids: Vec<i64> = two.as_array().unwrap().iter().map(|a| a["id"].as_i64().unwrap()).collect();
        assert_eq!(ids, vec![bar2, pie]);
        let one_bar = server.get(&format!("{base}?artifact_type=bar_chart&limit=1")).await.expect(200);
        assert_eq!(one_bar[0]["id"], json!(bar2));
        assert_eq!(one_bar.as_array().unwrap().len(), 1);
        server.get(&format!("{base}?limit=500")).await.expect(200);
        for bad in ["limit=0", "limit=-1", "limit=501", "limit=abc", "limit=", "limit=1.5", "bogus=1"] {
            let text = server.get(&format!("{base}?{bad}")).await.error(400);
            assert!(!text.is_empty(), "{bad}");
        }

        // One artifact in full.
        let full = server.get(&format!("{base}/{line}")).await.expect(200);
        assert_eq!(keys(&full), key_set(&["id", "artifact_type", "title", "turn_index", "created_at", "payload"]));
        assert_eq!(full["id"], json!(line));
        assert_eq!(full["artifact_type"], json!("line_chart"));
        assert_eq!(full["payload"]["title"], json!("Lines"));
        assert_eq!(full["payload"]["data"]["labels"], json!(["a", "b"]));
        let via_tool = server.tool_ok("arts", "get_artifact", with_reason(json!({"artifact_id": line}))).await;
        let via_tool: Value = serde_json::from_str(&via_tool).unwrap();
        assert_eq!(full, via_tool);
        server.get(&format!("{base}/{foreign}")).await.error(404);
        server.get(&format!("{base}/999999")).await.error(404);
        server.get(&format!("{base}/abc")).await.error(400);
        server.get("/api/threads/nope/artifacts").await.error(404);
        server.get("/api/threads/nope/artifacts/1").await.error(404);
        server.get("/api/threads/a%20b/artifacts").await.error(400);

        // The default limit is 50.
        let payload = json!({"note": "bulk"});
        let mut repo = tdb.db.begin_write().await.unwrap();
        for i in 0..55 {
            repo.artifacts().add_artifact(&tid("arts"), "note", Some(&format!("note {i}")), &payload, Some(0)).await.unwrap().expect("the thread exists");
        }
        repo.commit().await.unwrap();
        let page = server.get(base).await.expect(200);
        assert_eq!(page.as_array().unwrap().len(), 50);
        assert_eq!(page[0]["title"], json!("note 54"));
        let all = server.get(&format!("{base}?limit=500")).await.expect(200);
        assert_eq!(all.as_array().unwrap().len(), 59);
        teardown(tdb, server).await;
    }

    async fn chart_svg_renders_every_kind_inertly(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("svg").await;
        server.create_thread("other").await;
        let evil_title = "Sales <script>alert(1)</script> & co";
        let evil_label = "Q1 <b onmouseover=\"x()\">&</b>";
        let cases = [
            ("line", json!([{"name": "North & South", "values": [1, -2, 3]}, {"name": "<i>East</i>", "values": [2, 2, 1]}]), json!({"colors": ["#ff0000", "teal"], "smooth": true})),
            ("bar", json!([{"name": "North & South", "values": [1, -2, 3]}, {"name": "<i>East</i>", "values": [2, 2, 1]}]), json!({"colors": ["#ff0000", "teal"], "stacked": true})),
            ("pie", json!([{"name": "Share", "values": [1, 2, 3]}]), json!({"colors": ["#ff0000", "teal", "rgb(1, 2, 3)"], "donut": true})),
        ];
        for (kind, series, style) in cases {
            let id = make_chart(
                &server,
                "svg",
                chart_args(kind, evil_title, json!([evil_label, "Q2", "Q3"]), series, style),
            )
            .await;
            let (status, headers, body) = get_svg(&server, &format!("/api/threads/svg/artifacts/{id}/chart.svg")).await;
            assert_eq!(status, 200, "{body}");
            assert_eq!(headers[reqwest::header::CONTENT_TYPE], "image/svg+xml");
            assert_eq!(headers[reqwest::header::X_CONTENT_TYPE_OPTIONS], "nosniff");
            assert!(headers[reqwest::header::CONTENT_SECURITY_POLICY].to_str().unwrap().contains("default-src 'none'"));
            assert!(!body.to_ascii_lowercase().contains("<script"), "{body}");
            assert!(!body.contains("<b "), "{body}");
            let doc = roxmltree::Document::parse(&body).unwrap_or_else(|err| panic!("{kind}: {err}\n{body}"));
            let root = doc.root_element();
            assert_eq!(root.tag_name().name(), "svg");
            let text: Vec<&str> = doc.descendants().filter(|n| n.is_text()).filter_map(|n| n.text()).collect();
            assert!(text.contains(&evil_title), "{kind}: {text:?}");
            assert!(text.iter().any(|t| t.contains(evil_label)), "{kind}: {text:?}");
            assert!(text.contains(&"Q2") || text.iter().any(|t| t.starts_with("Q2")), "{kind}: {text:?}");
            if kind != "pie" {
                assert!(text.contains(&"X & <axis>"), "{kind}: {text:?}");
                assert!(text.contains(&"North & South"), "{kind}: {text:?}");
            }
            let paints: BTreeSet<&str> = doc
                .descendants()
                .flat_map(|n| [n.attribute("fill"), n.attribute("stroke")])
                .flatten()
                .collect();
            assert!(paints.contains("#ff0000") && paints.contains("teal"), "{kind}: {paints:?}");
            for node in doc.descendants().filter(|n| n.is_element()) {
                assert_ne!(node.tag_name().name(), "script");
                for attr in node.attributes() {
                    assert!(!attr.name().starts_with("on"), "{kind}: {}", attr.name());
                }
            }
            // Deterministic: the same artifact draws the same bytes.
            let (_, _, again) = get_svg(&server, &format!("/api/threads/svg/artifacts/{id}/chart.svg")).await;
            assert_eq!(again, body);
        }

        // Not a chart, another thread's chart, unknown ids and threads: JSON 404s.
        let mut repo = tdb.db.begin_write().await.unwrap();
        let (note, _) = repo.artifacts().add_artifact(&tid("svg"), "note", Some("n"), &json!({"text": "hi"}), Some(0)).await.unwrap().expect("the thread exists");
        let (broken, _) = repo.artifacts().add_artifact(&tid("svg"), "bar_chart", Some("b"), &json!({"nope": true}), Some(0)).await.unwrap().expect("the thread exists");
        repo.commit().await.unwrap();
        let foreign = simple_chart(&server, "other", "bar", "Theirs").await;
        let text = server.get(&format!("/api/threads/svg/artifacts/{note}/chart.svg")).await.error(404);
        assert!(text.contains("not a chart"), "{text}");
        server.get(&format!("/api/threads/svg/artifacts/{foreign}/chart.svg")).await.error(404);
        server.get("/api/threads/svg/artifacts/999999/chart.svg").await.error(404);
        server.get("/api/threads/nope/artifacts/1/chart.svg").await.error(404);
        server.get("/api/threads/svg/artifacts/x/chart.svg").await.error(400);
        server.get(&format!("/api/threads/svg/artifacts/{broken}/chart.svg")).await.error(422);
        let (status, _, _) = get_svg(&server, &format!("/api/threads/other/artifacts/{foreign}/chart.svg")).await;
        assert_eq!(status, 200);
        teardown(tdb, server).await;
    }

    async fn chart_png_draws_every_kind_and_refuses_what_svg_refuses(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("png").await;
        server.create_thread("other").await;
        for kind in ["line", "bar", "pie"] {
            let id = simple_chart(&server, "png", kind, "Sales <b>&</b> co").await;
            let path = format!("/api/threads/png/artifacts/{id}/chart.png");
            let (status, headers, body) = get_bytes(&server, &path).await;
            assert_eq!(status, 200, "{kind}: {}", String::from_utf8_lossy(&body));
            assert_eq!(headers[reqwest::header::CONTENT_TYPE], "image/png");
            assert_eq!(headers[reqwest::header::X_CONTENT_TYPE_OPTIONS], "nosniff");
            assert_eq!(common::png_size(&body), (1600, 960), "{kind}");
            assert!(body.len() > 5_000, "{kind}: only {} bytes", body.len());
            // Deterministic: the same artifact draws the same bytes.
            assert_eq!(get_bytes(&server, &path).await.2, body, "{kind}");
        }

        // Not a chart, another thread's chart, unknown ids and threads: JSON 4xx, never a 500.
        let mut repo = tdb.db.begin_write().await.unwrap();
        let (note, _) = repo.artifacts().add_artifact(&tid("png"), "note", Some("n"), &json!({"text": "hi"}), Some(0)).await.unwrap().expect("the thread exists");
        let (broken, _) = repo.artifacts().add_artifact(&tid("png"), "pie_chart", Some("b"), &json!({"title": 3}), Some(0)).await.unwrap().expect("the thread exists");
        repo.commit().await.unwrap();
        let foreign = simple_chart(&server, "other", "bar", "Theirs").await;
        let text = server.get(&format!("/api/threads/png/artifacts/{note}/chart.png")).await.error(404);
        assert!(text.contains("not a chart") && text.contains("chart.png"), "{text}");
        server.get(&format!("/api/threads/png/artifacts/{foreign}/chart.png")).await.error(404);
        server.get("/api/threads/png/artifacts/999999/chart.png").await.error(404);
        server.get("/api/threads/nope/artifacts/1/chart.png").await.error(404);
        server.get("/api/threads/png/artifacts/x/chart.png").await.error(400);
        server.get("/api/threads/png/artifacts/0/chart.png").await.error_any();
        let text = server.get(&format!("/api/threads/png/artifacts/{broken}/chart.png")).await.error(422);
        assert!(text.contains("cannot be drawn"), "{text}");
        assert_eq!(get_bytes(&server, &format!("/api/threads/other/artifacts/{foreign}/chart.png")).await.0, 200);
        teardown(tdb, server).await;
    }
}
