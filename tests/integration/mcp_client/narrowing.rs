//! A thread narrows which configured servers its agent may use (SPEC §13, `PATCH
//! /api/threads/{id}` `{mcp_servers}`): bad values are refused and change nothing, the choice
//! is shown on the thread, the model is offered only the chosen servers' tools (and a call of
//! another's fails), forks copy it and recordings carry it. Two Python SDK servers; both
//! engines.

use std::time::Duration;

use serde_json::{Value, json};

use super::{McpSetup, offered_tools, python_entry, quick, steps};
use crate::common::{
    agent::{chat, whole_turn},
    mock_llm::{Script, call},
    server::TestServer,
};

/// The external tools (`<server>__<tool>`) a model request offered.
fn external(body: &Value) -> Vec<String> {
    offered_tools(body)
        .into_iter()
        .filter(|name| name.contains("__"))
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
    response.text().await.unwrap()
}

async fn import(server: &TestServer, body: &str, id: &str) -> (u16, Value) {
    let response = server
        .client
        .post(server.url(&format!("/api/threads/import?id={id}")))
        .header("content-type", "application/x-ndjson")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// The recording with its thread line changed by `change`.
fn with_thread_line(recording: &str, change: impl FnOnce(&mut Value)) -> String {
    let mut lines: Vec<String> = recording.lines().map(str::to_string).collect();
    let mut first: Value = serde_json::from_str(&lines[0]).unwrap();
    change(&mut first);
    lines[0] = first.to_string();
    lines.join("\n") + "\n"
}

backend_tests! {
    async fn a_thread_uses_only_the_servers_it_chose(engine) {
        needs!(python_mcp);
        let setup = McpSetup::new(
            engine,
            json!({"mcpServers": {"alpha": python_entry(&[]), "beta": python_entry(&[])}}),
            quick(Duration::from_secs(30)),
            vec![
                // Turn 1 (alpha only): the model names a tool of beta anyway.
                Script::tool_calls(vec![call(
                    "beta__echo",
                    json!({"text": "x", "action_and_reasoning": "I try the other server."}),
                )]),
                Script::text("Beta is not mine to use."),
                // Turn 2 (no servers).
                Script::text("No other tools."),
                // Turn 3 (all again).
                Script::text("All tools."),
            ],
        )
        .await;
        setup.wait_for("alpha", "ready", |_| true).await;
        setup.wait_for("beta", "ready", |_| true).await;
        let server = &setup.server;
        server.create_thread("t").await;
        let fresh = server.get("/api/threads/t").await.expect(200);
        assert_eq!(fresh["mcp_servers"], Value::Null, "all servers by default: {fresh}");

        // Bad values: 4xx with a reason, and nothing changes.
        let unknown = server.patch("/api/threads/t", &json!({"mcp_servers": ["alpha", "gamma"]})).await.error(422);
        assert!(unknown.contains("`gamma`") && unknown.contains("`alpha`, `beta`"), "{unknown}");
        assert!(!unknown.contains("`alpha`, `gamma`"), "{unknown}");
        let twice = server.patch("/api/threads/t", &json!({"mcp_servers": ["alpha", "alpha"]})).await.error(422);
        assert!(twice.contains("twice"), "{twice}");
        for body in [
            json!({"mcp_servers": [1]}),
            json!({"mcp_servers": "alpha"}),
            json!({"mcp_servers": {"alpha": true}}),
            json!({"mcp_servers": [null]}),
        ] {
            server.patch("/api/threads/t", &body).await.error(422);
        }
        // One bad part refuses the whole body.
        server.patch("/api/threads/t", &json!({"mcp_servers": ["alpha"], "title": ""})).await.error(400);
        server.patch("/api/threads/t", &json!({"mcp_servers": ["alpha"], "document_mode": "maybe"})).await.error(400);
        server.patch("/api/threads/t", &json!({"title": "Renamed", "mcp_servers": ["nope"]})).await.error(422);
        let unchanged = server.get("/api/threads/t").await.expect(200);
        assert_eq!((unchanged["mcp_servers"].clone(), unchanged["title"].clone()), (Value::Null, fresh["title"].clone()));

        // A good value is stored, shown on the thread and in the list, and makes no revision.
        let set = server.patch("/api/threads/t", &json!({"mcp_servers": ["alpha"], "title": "Alpha only"})).await.expect(200);
        assert_eq!((set["mcp_servers"].clone(), set["title"].clone()), (json!(["alpha"]), json!("Alpha only")));
        assert_eq!(server.get("/api/threads/t").await.expect(200)["mcp_servers"], json!(["alpha"]));
        let listed = server.get("/api/threads").await.expect(200);
        let row = listed.as_array().unwrap().iter().find(|t| t["id"] == "t").unwrap().clone();
        assert_eq!(row["mcp_servers"], json!(["alpha"]));
        assert_eq!(server.get("/api/threads/t/history").await.expect(200)["revisions"], json!([]));

        // The model is offered alpha's tools only; a call of beta's is a failed step.
        let frames = whole_turn(chat(server, "t", "Use your tools").await).await;
        assert_eq!(frames.last().unwrap().data["status"], "completed", "{frames:?}");
        let requests = setup.mock.requests();
        let offered = external(&requests[0].body);
        assert!(offered.contains(&"alpha__echo".to_string()), "{offered:?}");
        assert!(offered.iter().all(|name| name.starts_with("alpha__")), "{offered:?}");
        let mut sorted = offered.clone();
        sorted.sort();
        assert_eq!(offered, sorted, "in name order");
        assert_eq!(external(&requests[1].body), offered, "fixed for the turn");
        let stepped = steps(&frames);
        assert_eq!(stepped.len(), 1, "{frames:?}");
        assert_eq!(stepped[0].0, "beta__echo");
        assert_eq!(stepped[0].1["success"], false);
        let error = stepped[0].1["error"].as_str().unwrap();
        assert!(error.contains("`beta`") && error.contains("does not use"), "{error}");

        // Forks copy the choice.
        let fork = server.post("/api/threads/t/fork", &json!({"id": "f"})).await.expect(201);
        assert_eq!(fork["mcp_servers"], json!(["alpha"]));
        assert_eq!(server.get("/api/threads/f").await.expect(200)["mcp_servers"], json!(["alpha"]));

        // Recordings carry it; one made before the setting existed still imports (all
        // servers); a malformed one is refused.
        let recording = export(server, "t").await;
        let first: Value = serde_json::from_str(recording.lines().next().unwrap()).unwrap();
        assert_eq!(first["mcp_servers"], json!(["alpha"]));
        let (status, copy) = import(server, &recording, "copy").await;
        assert_eq!((status, copy["mcp_servers"].clone()), (201, json!(["alpha"])), "{copy}");
        let old = with_thread_line(&recording, |line| {
            line.as_object_mut().unwrap().remove("mcp_servers");
        });
        let (status, old) = import(server, &old, "old").await;
        assert_eq!((status, old["mcp_servers"].clone()), (201, Value::Null), "{old}");
        for names in [json!(["Not A Name"]), json!(["alpha", "alpha"]), json!("alpha")] {
            let bad = with_thread_line(&recording, |line| line["mcp_servers"] = names.clone());
            let (status, answer) = import(server, &bad, "bad").await;
            assert_eq!(status, 400, "{names}: {answer}");
            assert!(answer["error"].as_str().unwrap().contains("line 1"), "{answer}");
        }
        server.get("/api/threads/bad").await.expect(404);

        // None: no external tools at all.
        let none = server.patch("/api/threads/t", &json!({"mcp_servers": []})).await.expect(200);
        assert_eq!(none["mcp_servers"], json!([]));
        let frames = whole_turn(chat(server, "t", "Anything?").await).await;
        assert_eq!(frames.last().unwrap().data["status"], "completed", "{frames:?}");
        let requests = setup.mock.requests();
        assert_eq!(external(&requests[2].body), Vec::<String>::new());
        assert!(offered_tools(&requests[2].body).contains(&"set_objective".to_string()));

        // `null`: all of them again, exactly as a thread that never chose.
        let all = server.patch("/api/threads/t", &json!({"mcp_servers": null})).await.expect(200);
        assert_eq!(all["mcp_servers"], Value::Null);
        let frames = whole_turn(chat(server, "t", "And now?").await).await;
        assert_eq!(frames.last().unwrap().data["status"], "completed", "{frames:?}");
        let requests = setup.mock.requests();
        let every = external(&requests[3].body);
        assert!(every.contains(&"alpha__echo".to_string()) && every.contains(&"beta__echo".to_string()), "{every:?}");
        setup.cleanup().await;
    }
}
