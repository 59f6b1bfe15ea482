//! The REST API end to end: a real server on a local port, driven over HTTP, on SQLite and
//! PostgreSQL.

use crate::common;

use std::collections::BTreeSet;

use common::{
    TestDb,
    server::{Reply, TestServer, key_set, keys, setup, teardown},
};
use haico::http::HttpConfig;
use reqwest::Method;
use serde_json::{Value, json};

#[track_caller]
fn assert_timestamp(value: &Value) {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("timestamp is not a string: {value}"));
    assert!(
        chrono::DateTime::parse_from_rfc3339(text).is_ok(),
        "not an RFC 3339 timestamp: {text}"
    );
}

#[track_caller]
fn assert_thread_shape(thread: &Value) {
    assert_eq!(
        keys(thread),
        key_set(&[
            "id",
            "title",
            "turn_index",
            "created_at",
            "updated_at",
            "document_mode",
            "mcp_servers",
            "may"
        ]),
        "{thread}"
    );
    assert_eq!(thread["document_mode"], json!("direct"), "{thread}");
    // Without accounts (these tests' server) the caller may do everything.
    assert_eq!(
        thread["may"],
        json!({"chat": true, "edit": true, "share": true, "delete": true}),
        "{thread}"
    );
    assert_eq!(thread["mcp_servers"], Value::Null, "{thread}");
    assert!(
        thread["id"].is_string() && thread["title"].is_string(),
        "{thread}"
    );
    assert!(thread["turn_index"].is_i64(), "{thread}");
    assert_timestamp(&thread["created_at"]);
    assert_timestamp(&thread["updated_at"]);
}

/// The thread row and its workspace, for "nothing changed" checks.
async fn state(server: &TestServer, thread: &str) -> (Value, Value) {
    let row = server
        .get(&format!("/api/threads/{thread}"))
        .await
        .expect(200);
    (row, server.workspace(thread).await)
}

fn empty_workspace() -> Value {
    json!({"objective": null, "document": null, "todos": [], "preferences": [], "artifacts": [],
           "document_mode": "direct", "suggestions": []})
}

fn chart_args() -> Value {
    json!({
        "action_and_reasoning": "Show the budget split.",
        "chart_type": "bar",
        "title": "Budget",
        "data": {"labels": ["a", "b"], "series": [{"name": "EUR", "values": [1, 2]}]}
    })
}

/// Fills every panel of `thread`: objective, document, todos, preferences (one locked through
/// the user path) and a chart.
async fn fill_workspace(server: &TestServer, thread: &str) {
    server
        .tool_ok(
            thread,
            "set_objective",
            json!({"action_and_reasoning": "Goal.", "objective": "Plan a trip"}),
        )
        .await;
    server
        .tool_ok(
            thread,
            "update_document",
            json!({"action_and_reasoning": "Draft.", "content": "# Trip\nDay 1", "title": "Itinerary"}),
        )
        .await;
    server
        .tool_ok(
            thread,
            "add_todos",
            json!({"action_and_reasoning": "Plan.", "steps": [{"text": "Book"}, {"text": "Flights", "depth": 1}, {"text": "Pack"}]}),
        )
        .await;
    server
        .tool_ok(
            thread,
            "add_preferences",
            json!({"action_and_reasoning": "Record.", "items": [{"title": "Budget 2k", "subtitle": "EUR", "kind": "hard"}, {"title": "Beach"}]}),
        )
        .await;
    server
        .post(
            &format!("/api/threads/{thread}/preferences"),
            &json!({"title": "No night trains", "locked": true}),
        )
        .await
        .expect(201);
    let env = server.tool(thread, "chart_generator", chart_args()).await;
    assert_eq!(env["success"], json!(true), "{env}");
    assert!(env["artifact_id"].is_i64(), "{env}");
}

backend_tests! {
    async fn healthz_answers_ok(engine) {
        let (tdb, server) = setup(engine).await;
        let reply = server.get("/healthz").await;
        assert_eq!(reply.status.as_u16(), 200);
        assert_eq!(reply.body, json!({"status": "ok"}));
        teardown(tdb, server).await;
    }

    async fn tool_list_is_the_sixteen_specs(engine) {
        let (tdb, server) = setup(engine).await;
        let body = server.get("/api/tools").await.expect(200);
        let list = body.as_array().expect("an array");
        assert_eq!(list.len(), 16);
        assert_eq!(body, serde_json::to_value(haico::tools::tool_specs()).unwrap());
        let names: BTreeSet<&str> = list.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names.len(), 16, "tool names are unique");
        for tool in list {
            assert_eq!(keys(tool), key_set(&["name", "description", "parameters"]), "{tool}");
            let params = &tool["parameters"];
            assert_eq!(params["type"], json!("object"), "{tool}");
            assert_eq!(params["properties"]["action_and_reasoning"]["type"], json!("string"), "{tool}");
            let required = params["required"].as_array().expect("required list");
            assert!(required.contains(&json!("action_and_reasoning")), "{tool}");
        }
        teardown(tdb, server).await;
    }

    async fn create_thread_shapes_and_conflicts(engine) {
        let (tdb, server) = setup(engine).await;
        let thread = server.post("/api/threads", &json!({"id": "trip-1", "title": "Trip"})).await.expect(201);
        assert_thread_shape(&thread);
        assert_eq!(thread["id"], json!("trip-1"));
        assert_eq!(thread["title"], json!("Trip"));
        assert_eq!(thread["turn_index"], json!(0));

        // No body at all: a generated UUID and a default title.
        let resp = server.client.post(server.url("/api/threads")).send().await.unwrap();
        let generated = TestServer::read(resp).await.expect(201);
        assert_thread_shape(&generated);
        let id = generated["id"].as_str().unwrap();
        let uuid = uuid::Uuid::parse_str(id).expect("generated id is a UUID");
        assert_eq!(uuid.get_version_num(), 4);
        assert!(!generated["title"].as_str().unwrap().trim().is_empty());

        // An empty object works the same way, with a different id.
        let other = server.post("/api/threads", &json!({})).await.expect(201);
        assert_ne!(other["id"], generated["id"]);

        // Only a title.
        let titled = server.post("/api/threads", &json!({"title": "Only a title"})).await.expect(201);
        assert_eq!(titled["title"], json!("Only a title"));

        // An existing id is a conflict and does not touch the existing thread.
        let text = server.post("/api/threads", &json!({"id": "trip-1", "title": "Other"})).await.error(409);
        assert!(text.contains("trip-1"), "{text}");
        let again = server.get("/api/threads/trip-1").await.expect(200);
        assert_eq!(again, thread);

        // Invalid ids.
        let long = "x".repeat(65);
        for bad in ["a b", long.as_str(), "", "é", "a/b", "a.b"] {
            server.post("/api/threads", &json!({"id": bad})).await.error(400);
        }
        let max = "y".repeat(64);
        server.post("/api/threads", &json!({"id": max})).await.expect(201);

        // Bad bodies and titles.
        server.post("/api/threads", &json!({"title": "   "})).await.error(400);
        server.post("/api/threads", &json!({"title": "t".repeat(201)})).await.error(400);
        server.post("/api/threads", &json!({"id": "ok-id", "colour": "red"})).await.error_any();
        server.post("/api/threads", &json!({"id": 5})).await.error_any();
        server.post("/api/threads", &json!(["not", "an", "object"])).await.error_any();
        server.send_raw(Method::POST, "/api/threads", Some("application/json"), "{not json").await.error(400);
        // None of the failures made a thread.
        let list = server.get("/api/threads").await.expect(200);
        assert_eq!(list.as_array().unwrap().len(), 5, "{list}");
        teardown(tdb, server).await;
    }

    async fn list_get_and_rename_threads(engine) {
        let (tdb, server) = setup(engine).await;
        let a = server.create_thread("alpha").await;
        let b = server.create_thread("beta").await;
        let list = server.get("/api/threads").await.expect(200);
        let list = list.as_array().unwrap();
        assert_eq!(list.len(), 2);
        for item in list {
            assert_thread_shape(item);
        }
        let ids: BTreeSet<&str> = list.iter().map(|t| t["id"].as_str().unwrap()).collect();
        assert_eq!(ids, key_set(&["alpha", "beta"]));

        assert_eq!(server.get("/api/threads/alpha").await.expect(200), a);
        assert_eq!(server.get("/api/threads/beta").await.expect(200), b);
        server.get("/api/threads/gamma").await.error(404);
        server.get("/api/threads/a%20b").await.error(400);

        let renamed = server.patch("/api/threads/alpha", &json!({"title": "  Renamed  "})).await.expect(200);
        assert_thread_shape(&renamed);
        assert_eq!(renamed["id"], json!("alpha"));
        assert_eq!(renamed["title"], json!("Renamed"));
        assert_eq!(renamed["created_at"], a["created_at"]);
        assert_eq!(server.get("/api/threads/alpha").await.expect(200), renamed);

        server.patch("/api/threads/alpha", &json!({"title": "   "})).await.error(400);
        server.patch("/api/threads/alpha", &json!({"title": ""})).await.error(400);
        server.patch("/api/threads/alpha", &json!({})).await.error_any();
        server.patch("/api/threads/alpha", &json!({"title": "x", "extra": 1})).await.error_any();
        server.patch("/api/threads/gamma", &json!({"title": "Nope"})).await.error(404);
        server.send_raw(Method::PATCH, "/api/threads/alpha", None, r#"{"title":"x"}"#).await.error(415);
        assert_eq!(server.get("/api/threads/alpha").await.expect(200), renamed);
        teardown(tdb, server).await;
    }

    async fn workspace_snapshot_has_the_spec_shape(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("ws").await;
        assert_eq!(server.workspace("ws").await, empty_workspace());
        fill_workspace(&server, "ws").await;

        let ws = server.workspace("ws").await;
        assert_eq!(keys(&ws), key_set(&["objective", "document", "todos", "preferences", "artifacts",
                                        "document_mode", "suggestions"]));
        assert_eq!(ws["objective"], json!("Plan a trip"));
        assert_eq!(ws["document"], json!({"title": "Itinerary", "content": "# Trip\nDay 1", "version": 1}));

        let todos = ws["todos"].as_array().unwrap();
        assert_eq!(todos.len(), 3);
        for todo in todos {
            assert_eq!(keys(todo), key_set(&["id", "text", "depth", "done"]), "{todo}");
            assert!(todo["id"].is_i64());
        }
        let plan: Vec<(&str, i64, bool)> = todos
            .iter()
            .map(|t| (t["text"].as_str().unwrap(), t["depth"].as_i64().unwrap(), t["done"].as_bool().unwrap()))
            .collect();
        assert_eq!(plan, vec![("Book", 0, false), ("Flights", 1, false), ("Pack", 0, false)]);

        let prefs = ws["preferences"].as_array().unwrap();
        assert_eq!(prefs.len(), 3);
        for pref in prefs {
            assert_eq!(keys(pref), key_set(&["id", "title", "subtitle", "kind", "locked"]), "{pref}");
            assert!(pref["id"].is_i64());
        }
        let without_ids: Vec<Value> = prefs
            .iter()
            .map(|p| json!([p["title"], p["subtitle"], p["kind"], p["locked"]]))
            .collect();
        assert_eq!(
            without_ids,
            vec![
                json!(["Budget 2k", "EUR", "hard", false]),
                json!(["Beach", null, "soft", false]),
                json!(["No night trains", null, "soft", true]),
            ]
        );

        let artifacts = ws["artifacts"].as_array().unwrap();
        assert_eq!(artifacts.len(), 1);
        let art = &artifacts[0];
        assert_eq!(keys(art), key_set(&["id", "artifact_type", "title", "turn_index", "created_at"]));
        assert!(art["id"].is_i64());
        assert_eq!(art["artifact_type"], json!("bar_chart"));
        assert_eq!(art["title"], json!("Budget"));
        assert_eq!(art["turn_index"], json!(0));
        assert_timestamp(&art["created_at"]);

        server.get("/api/threads/nope/workspace").await.error(404);
        server.get("/api/threads/a%20b/workspace").await.error(400);
        teardown(tdb, server).await;
    }

    async fn deleting_a_thread_deletes_its_whole_workspace(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("doomed").await;
        server.create_thread("bystander").await;
        fill_workspace(&server, "doomed").await;
        fill_workspace(&server, "bystander").await;
        let bystander = state(&server, "bystander").await;
        let old_artifact = server.workspace("doomed").await["artifacts"][0]["id"].as_i64().unwrap();

        assert_eq!(server.delete("/api/threads/doomed").await.expect(204), Value::Null);
        server.get("/api/threads/doomed").await.error(404);
        server.get("/api/threads/doomed/workspace").await.error(404);
        server.get("/api/threads/doomed/preferences").await.error(404);
        server.delete("/api/threads/doomed").await.error(404);
        let text = server
            .post("/api/threads/doomed/tools/list_todos", &json!({"action_and_reasoning": "Look."}))
            .await
            .error(404);
        assert!(text.contains("doomed"), "{text}");
        let list = server.get("/api/threads").await.expect(200);
        assert_eq!(list.as_array().unwrap().len(), 1);

        // The same id again starts from nothing.
        let fresh = server.create_thread("doomed").await;
        assert_eq!(fresh["turn_index"], json!(0));
        assert_eq!(server.workspace("doomed").await, empty_workspace());
        assert_eq!(server.get("/api/threads/doomed/preferences").await.expect(200), json!([]));
        let env = server
            .tool("doomed", "get_artifact", json!({"action_and_reasoning": "Look.", "artifact_id": old_artifact}))
            .await;
        assert_eq!(env["success"], json!(false), "{env}");
        let plan = server.tool_ok("doomed", "list_todos", json!({"action_and_reasoning": "Look."})).await;
        assert_eq!(plan, "(the plan is empty)");
        let prefs = server.tool_ok("doomed", "list_preferences", json!({"action_and_reasoning": "Look."})).await;
        assert_eq!(prefs, "(no preferences recorded yet)");

        // The other thread was not touched.
        assert_eq!(state(&server, "bystander").await, bystander);
        teardown(tdb, server).await;
    }

    async fn tools_endpoint_answers_envelopes(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("t").await;

        let env = server
            .tool("t", "append_to_document", json!({"action_and_reasoning": "Start.", "text": "héllo"}))
            .await;
        assert_eq!(env, json!({"success": true, "summary": "appended (5 chars total)"}));
        let env = server.tool("t", "chart_generator", chart_args()).await;
        assert_eq!(keys(&env), key_set(&["success", "summary", "artifact", "artifact_id"]), "{env}");
        assert_eq!(env["artifact"]["artifact_type"], json!("bar_chart"));
        let artifact_id = env["artifact_id"].as_i64().unwrap();
        let env = server
            .tool("t", "get_artifact", json!({"action_and_reasoning": "Check.", "artifact_id": artifact_id}))
            .await;
        assert_eq!(env["success"], json!(true), "{env}");
        assert!(env.get("artifact").is_none(), "get_artifact makes no new artifact: {env}");

        let before = state(&server, "t").await;
        // Invalid arguments: 200 with a failure envelope, nothing written.
        let failures = [
            ("append_to_document", json!({"text": "no reasoning"})),
            ("append_to_document", json!({"action_and_reasoning": "Go.", "text": ""})),
            ("append_to_document", json!({"action_and_reasoning": "Go.", "text": 5})),
            ("add_todos", json!({"action_and_reasoning": "Go.", "steps": []})),
            ("add_todos", json!({"action_and_reasoning": "Go.", "steps": [{"text": "a"}, {"text": "b", "depth": 2}]})),
            ("add_preferences", json!({"action_and_reasoning": "Go.", "items": [{"title": "ok"}, {"title": " "}]})),
            ("add_preferences", json!({"action_and_reasoning": "Go.", "items": [{"title": "x", "kind": "medium"}]})),
            ("set_objective", json!({"action_and_reasoning": "Go.", "objective": ""})),
            ("chart_generator", json!({"action_and_reasoning": "Go.", "chart_type": "pie", "title": "P", "data": {"labels": ["a"], "series": [{"name": "s", "values": [-1]}]}})),
            ("update_document", json!({"action_and_reasoning": "Go.", "content": "x", "colour": "red"})),
            ("list_todos", json!(["not", "an", "object"])),
            ("get_artifact", json!({"action_and_reasoning": "Go.", "artifact_id": 987_654_321})),
        ];
        for (tool, args) in failures {
            let env = server.tool("t", tool, args.clone()).await;
            assert_eq!(keys(&env), key_set(&["success", "error"]), "{tool}({args}): {env}");
            assert_eq!(env["success"], json!(false), "{tool}({args}): {env}");
            assert!(!env["error"].as_str().unwrap().is_empty());
            assert_eq!(state(&server, "t").await, before, "{tool}({args}) changed the workspace");
        }

        // HTTP-level errors, each a JSON error and no write.
        let text = server
            .post("/api/threads/ghost/tools/append_to_document", &json!({"action_and_reasoning": "Go.", "text": "x"}))
            .await
            .error(404);
        assert!(text.contains("ghost"), "{text}");
        let text = server
            .post("/api/threads/t/tools/delete_everything", &json!({"action_and_reasoning": "Go."}))
            .await
            .error(404);
        assert!(text.contains("delete_everything"), "{text}");
        server
            .post("/api/threads/ghost/tools/no_such_tool", &json!({"action_and_reasoning": "Go."}))
            .await
            .error(404);
        server
            .post("/api/threads/a%20b/tools/list_todos", &json!({"action_and_reasoning": "Go."}))
            .await
            .error(400);
        let path = "/api/threads/t/tools/append_to_document";
        server.send_raw(Method::POST, path, Some("application/json"), "{not json").await.error(400);
        server.send_raw(Method::POST, path, Some("application/json"), "").await.error(400);
        server
            .send_raw(Method::POST, path, None, r#"{"action_and_reasoning":"Go.","text":"x"}"#)
            .await
            .error(415);
        server
            .send_raw(Method::POST, path, Some("text/plain"), r#"{"action_and_reasoning":"Go.","text":"x"}"#)
            .await
            .error(415);
        server.request(Method::GET, path, None).await.error_any();
        assert_eq!(state(&server, "t").await, before);
        teardown(tdb, server).await;
    }

    async fn oversized_bodies_are_413_and_write_nothing(engine) {
        let tdb = TestDb::new(engine).await;
        let server = TestServer::with_config(
            &tdb.db,
            HttpConfig {
                max_body_bytes: 1024,
                ..HttpConfig::default()
            },
        )
        .await;
        server.create_thread("small").await;
        let pref = server
            .post("/api/threads/small/preferences", &json!({"title": "Keep"}))
            .await
            .expect(201);
        server
            .tool_ok("small", "append_to_document", json!({"action_and_reasoning": "Start.", "text": "seed"}))
            .await;
        let before = state(&server, "small").await;
        let threads_before = server.get("/api/threads").await.expect(200);

        let big = "x".repeat(4096);
        let text = server
            .post(
                "/api/threads/small/tools/append_to_document",
                &json!({"action_and_reasoning": "Add a lot.", "text": big}),
            )
            .await
            .error(413);
        assert!(!text.contains(&big));
        server
            .post("/api/threads/small/preferences", &json!({"title": big}))
            .await
            .error(413);
        server
            .patch(&format!("/api/threads/small/preferences/{}", pref["id"]), &json!({"subtitle": big}))
            .await
            .error(413);
        server.patch("/api/threads/small", &json!({"title": big})).await.error(413);
        server.post("/api/threads", &json!({"id": "big", "title": big})).await.error(413);

        // Just under the limit still works.
        let fits = "y".repeat(900);
        server
            .tool_ok("small", "append_to_document", json!({"action_and_reasoning": "Add.", "text": fits}))
            .await;
        let after = server.workspace("small").await;
        assert_eq!(after["document"]["content"].as_str().unwrap().chars().count(), 904);

        let (row, _) = state(&server, "small").await;
        assert_eq!(before.1["preferences"], after["preferences"]);
        assert_eq!(before.0["title"], row["title"]);
        assert_eq!(server.get("/api/threads").await.expect(200).as_array().unwrap().len(),
                   threads_before.as_array().unwrap().len());
        server.shutdown().await;
        tdb.cleanup().await;
    }

    async fn user_path_creates_preferences(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("p").await;
        let base = "/api/threads/p/preferences";
        assert_eq!(server.get(base).await.expect(200), json!([]));

        let soft = server.post(base, &json!({"title": "  Beach  "})).await.expect(201);
        assert_eq!(keys(&soft), key_set(&["id", "title", "subtitle", "kind", "locked"]));
        assert!(soft["id"].is_i64());
        assert_eq!(
            json!([soft["title"], soft["subtitle"], soft["kind"], soft["locked"]]),
            json!(["Beach", null, "soft", false])
        );
        let hard = server
            .post(base, &json!({"title": "Budget", "subtitle": "under 2k", "kind": "hard", "locked": true}))
            .await
            .expect(201);
        assert_eq!(
            json!([hard["title"], hard["subtitle"], hard["kind"], hard["locked"]]),
            json!(["Budget", "under 2k", "hard", true])
        );
        let blank_sub = server.post(base, &json!({"title": "Quiet", "subtitle": "  ", "locked": false})).await.expect(201);
        assert_eq!(blank_sub["subtitle"], Value::Null);
        assert_eq!(blank_sub["locked"], json!(false));

        let list = server.get(base).await.expect(200);
        assert_eq!(list, json!([soft, hard, blank_sub]));
        let listed = server.tool_ok("p", "list_preferences", json!({"action_and_reasoning": "Look."})).await;
        assert_eq!(listed, "#1 [soft] Beach\n#2 [hard] Budget — under 2k (locked)\n#3 [soft] Quiet");

        let before = state(&server, "p").await;
        server.post(base, &json!({"title": "x", "kind": "medium"})).await.error(422);
        server.post(base, &json!({"title": "   "})).await.error(400);
        server.post(base, &json!({"title": ""})).await.error(400);
        server.post(base, &json!({"title": "t".repeat(301)})).await.error(400);
        server.post(base, &json!({"title": "x", "subtitle": "s".repeat(1001)})).await.error(400);
        server.post(base, &json!({"title": "x", "colour": "red"})).await.error_any();
        server.post(base, &json!({"subtitle": "no title"})).await.error_any();
        server.post(base, &json!({"title": "x", "locked": "yes"})).await.error_any();
        server.send_raw(Method::POST, base, Some("application/json"), "{oops").await.error(400);
        server.send_raw(Method::POST, base, None, r#"{"title":"x"}"#).await.error(415);
        server.post("/api/threads/ghost/preferences", &json!({"title": "x"})).await.error(404);
        server.get("/api/threads/ghost/preferences").await.error(404);
        server.post("/api/threads/a%20b/preferences", &json!({"title": "x"})).await.error(400);
        assert_eq!(state(&server, "p").await, before);
        teardown(tdb, server).await;
    }

    async fn user_path_edits_and_deletes_preferences(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("p").await;
        server.create_thread("other").await;
        let base = "/api/threads/p/preferences";
        let pref = server.post(base, &json!({"title": "Beach"})).await.expect(201);
        let id = pref["id"].as_i64().unwrap();
        let at = format!("{base}/{id}");

        let p = server.patch(&at, &json!({"title": "Sea view"})).await.expect(200);
        assert_eq!(p, json!({"id": id, "title": "Sea view", "subtitle": null, "kind": "soft", "locked": false}));
        let p = server.patch(&at, &json!({"subtitle": "south facing"})).await.expect(200);
        assert_eq!(p["subtitle"], json!("south facing"));
        assert_eq!(p["title"], json!("Sea view"));
        let p = server.patch(&at, &json!({"kind": "hard"})).await.expect(200);
        assert_eq!((p["kind"].clone(), p["subtitle"].clone()), (json!("hard"), json!("south facing")));
        let p = server.patch(&at, &json!({"subtitle": null})).await.expect(200);
        assert_eq!(p["subtitle"], Value::Null);
        assert_eq!(p["kind"], json!("hard"));
        let p = server.patch(&at, &json!({"locked": true})).await.expect(200);
        assert_eq!(p, json!({"id": id, "title": "Sea view", "subtitle": null, "kind": "hard", "locked": true}));
        let p = server.patch(&at, &json!({"locked": false, "kind": "soft", "title": "Sea", "subtitle": "s"})).await.expect(200);
        assert_eq!(p, json!({"id": id, "title": "Sea", "subtitle": "s", "kind": "soft", "locked": false}));
        assert_eq!(server.get(base).await.expect(200), json!([p]));

        let before = state(&server, "p").await;
        let text = server.patch(&at, &json!({})).await.error(400);
        assert!(text.contains("nothing"), "{text}");
        server.patch(&at, &json!({"title": "  "})).await.error(400);
        server.patch(&at, &json!({"kind": "medium"})).await.error(422);
        server.patch(&at, &json!({"title": "x", "colour": "red"})).await.error_any();
        server.patch(&format!("{base}/999999"), &json!({"title": "x"})).await.error(404);
        server.patch(&format!("{base}/abc"), &json!({"title": "x"})).await.error(400);
        server.delete(&format!("{base}/abc")).await.error(400);
        server.patch(&format!("/api/threads/other/preferences/{id}"), &json!({"title": "x"})).await.error(404);
        server.delete(&format!("/api/threads/other/preferences/{id}")).await.error(404);
        server.patch(&format!("/api/threads/ghost/preferences/{id}"), &json!({"title": "x"})).await.error(404);
        server.send_raw(Method::PATCH, &at, None, r#"{"title":"x"}"#).await.error(415);
        assert_eq!(state(&server, "p").await, before);

        assert_eq!(server.delete(&at).await.expect(204), Value::Null);
        server.delete(&at).await.error(404);
        server.patch(&at, &json!({"title": "back"})).await.error(404);
        assert_eq!(server.get(base).await.expect(200), json!([]));
        teardown(tdb, server).await;
    }

    async fn locks_bind_the_agent_path_not_the_user_path(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("l").await;
        let base = "/api/threads/l/preferences";
        server
            .tool_ok("l", "add_preferences", json!({"action_and_reasoning": "Record.", "items": [
                {"title": "One"}, {"title": "Two", "kind": "hard"}, {"title": "Three"}
            ]}))
            .await;
        let prefs = server.get(base).await.expect(200);
        let ids: Vec<i64> = prefs.as_array().unwrap().iter().map(|p| p["id"].as_i64().unwrap()).collect();
        let locked = server.patch(&format!("{base}/{}", ids[1]), &json!({"locked": true})).await.expect(200);
        assert_eq!(locked["locked"], json!(true));

        // The agent path skips the locked one and says so.
        let summary = server
            .tool_ok("l", "update_preferences", json!({"action_and_reasoning": "Rename.", "updates": [
                {"index": 1, "title": "Uno"}, {"index": 2, "title": "Dos"}, {"index": 3, "kind": "hard"}
            ]}))
            .await;
        assert!(summary.contains("#2") && summary.contains("locked"), "{summary}");
        assert!(summary.contains("#1") && summary.contains("#3"), "{summary}");
        let summary = server
            .tool_ok("l", "update_preferences", json!({"action_and_reasoning": "Rename.", "updates": [{"index": 2, "subtitle": "x"}]}))
            .await;
        assert!(summary.starts_with("nothing changed: #2") && summary.contains("locked by the user"), "{summary}");
        let summary = server
            .tool_ok("l", "remove_preferences", json!({"action_and_reasoning": "Drop.", "indices": [2]}))
            .await;
        assert!(summary.starts_with("nothing changed: #2") && summary.contains("locked by the user"), "{summary}");
        let now = server.get(base).await.expect(200);
        assert_eq!(now[1], locked, "the locked preference is untouched");
        assert_eq!(now[0]["title"], json!("Uno"));
        assert_eq!(now[2]["kind"], json!("hard"));

        // A batch removal: unlocked ones go, the locked one stays.
        let summary = server
            .tool_ok("l", "remove_preferences", json!({"action_and_reasoning": "Drop.", "indices": [1, 2, 3, 9]}))
            .await;
        assert!(summary.contains("removed") && summary.contains("locked") && summary.contains('9'), "{summary}");
        assert_eq!(server.get(base).await.expect(200), json!([locked]));

        // The user path edits a locked preference freely, and it stays locked.
        let edited = server
            .patch(&format!("{base}/{}", ids[1]), &json!({"title": "Two (user)", "subtitle": "mine", "kind": "soft"}))
            .await
            .expect(200);
        assert_eq!(edited, json!({"id": ids[1], "title": "Two (user)", "subtitle": "mine", "kind": "soft", "locked": true}));
        let listed = server.tool_ok("l", "list_preferences", json!({"action_and_reasoning": "Look."})).await;
        assert_eq!(listed, "#1 [soft] Two (user) — mine (locked)");

        // Unlocked by the user, the agent may change it again.
        server.patch(&format!("{base}/{}", ids[1]), &json!({"locked": false})).await.expect(200);
        let summary = server
            .tool_ok("l", "update_preferences", json!({"action_and_reasoning": "Rename.", "updates": [{"index": 1, "title": "Agent"}]}))
            .await;
        assert!(!summary.contains("locked"), "{summary}");
        assert_eq!(server.get(base).await.expect(200)[0]["title"], json!("Agent"));

        // The user path deletes a locked preference.
        let kept = server.post(base, &json!({"title": "Sealed", "locked": true})).await.expect(201);
        let summary = server
            .tool_ok("l", "remove_preferences", json!({"action_and_reasoning": "Drop.", "indices": [2]}))
            .await;
        assert!(summary.contains("locked"), "{summary}");
        server.delete(&format!("{base}/{}", kept["id"])).await.expect(204);
        assert_eq!(server.get(base).await.expect(200).as_array().unwrap().len(), 1);
        teardown(tdb, server).await;
    }

    async fn unknown_routes_and_methods_answer_json(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("r").await;
        for path in ["/nope", "/api", "/api/nope", "/api/threads/r/nope", "/api/threads/r/preferences/1/x"] {
            let text = server.get(path).await.error(404);
            assert!(!text.is_empty());
        }
        server.post("/api/nope", &json!({})).await.error(404);
        // A known path with a method it does not serve is still a JSON error.
        server.request(Method::PUT, "/api/threads", None).await.error(405);
        server.request(Method::POST, "/api/threads/r/workspace", None).await.error(405);
        server.request(Method::GET, "/api/threads/r/preferences/1", None).await.error(405);
        server.request(Method::DELETE, "/api/tools", None).await.error(405);
        // …and still says which methods the path takes.
        let resp = server.client.put(server.url("/api/threads")).send().await.unwrap();
        let allow = resp.headers().get(reqwest::header::ALLOW).map(|v| v.to_str().unwrap().to_string());
        let allow = allow.expect("405 carries an Allow header");
        assert!(allow.contains("GET") && allow.contains("POST"), "{allow}");
        teardown(tdb, server).await;
    }
}

/// Replies are compared whole in these tests; make sure the helper rejects non-error shapes.
#[test]
fn reply_error_helper_is_strict() {
    let ok = Reply {
        status: reqwest::StatusCode::NOT_FOUND,
        body: json!({"error": "x"}),
        content_type: Some("application/json".to_string()),
    };
    assert_eq!(ok.error(404), "x");
    let extra = Reply {
        body: json!({"error": "x", "detail": 1}),
        ..ok.clone()
    };
    assert!(std::panic::catch_unwind(|| extra.error_any()).is_err());
    let text = Reply {
        content_type: Some("text/plain".to_string()),
        ..ok
    };
    assert!(std::panic::catch_unwind(|| text.error_any()).is_err());
}
