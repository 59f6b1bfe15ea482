//! The agent and a stdio MCP server written with the official Python SDK: its tools offered to
//! the model, a call that works, an `isError` result, a timeout, the server killed in the
//! middle of a call (and back for the next one), a tool list that changes while haico runs,
//! and servers that cannot start (calls that need approval: `approval.rs`). Both engines.

use std::time::Duration;

use serde_json::{Value, json};

use super::{McpSetup, offered_tools, python_entry, quick, steps};
use crate::common::{
    agent::whole_turn,
    mock_llm::{Script, call},
};

fn reason(text: &str) -> (&'static str, Value) {
    ("action_and_reasoning", json!(text))
}

fn args(pairs: &[(&str, Value)], why: &str) -> Value {
    let mut map = serde_json::Map::new();
    for (k, v) in pairs {
        map.insert(k.to_string(), v.clone());
    }
    let (k, v) = reason(why);
    map.insert(k.to_string(), v);
    Value::Object(map)
}

backend_tests! {
    async fn tools_are_offered_and_a_call_is_a_step(engine) {
        needs!(python_mcp);
        // A name no other test uses: the metrics are the process's, and another test starting
        // or killing a server of the same name would move its status gauge under this one.
        let name = match engine {
            crate::common::Engine::Sqlite => "offered-sqlite",
            crate::common::Engine::Postgres => "offered-postgres",
        };
        let (echo, secret) = (format!("{name}__echo"), format!("{name}__secret"));
        let setup = McpSetup::new(
            engine,
            json!({"mcpServers": {name: python_entry(&[])}}),
            quick(Duration::from_secs(30)),
            vec![
                Script::tool_calls(vec![
                    call(&echo, args(&[("text", json!("hello"))], "I check the echo service.")),
                    call(&secret, args(&[], "I check the key reached the server.")),
                ]),
                Script::text("The echo service answered."),
            ],
        )
        .await;
        let ready = setup.wait_for(name, "ready", |_| true).await;
        assert_eq!(ready["transport"], "stdio");
        assert_eq!(ready["error"], Value::Null);
        assert!(ready["tools"].as_array().unwrap().contains(&json!("crash")), "{ready}");
        setup.server.create_thread("t").await;

        let frames = whole_turn(crate::common::agent::chat(&setup.server, "t", "Say hello").await).await;
        let done = frames.last().unwrap();
        assert_eq!(done.data["status"], "completed", "{frames:?}");
        let stepped = steps(&frames);
        assert_eq!(stepped.len(), 2, "{frames:?}");
        assert_eq!(stepped[0].0, echo);
        assert_eq!(stepped[0].1, json!({"success": true, "summary": "echo: hello"}));
        // The entry's `env` reaches the child; haico's own variables do not.
        assert_eq!(stepped[1].1["summary"], "key=k-123 leaked=False", "{:?}", stepped[1]);
        let step = frames.iter().find(|f| f.event == "step").unwrap();
        assert_eq!(step.data["action_and_reasoning"], "I check the echo service.");
        assert_eq!(step.data["arguments"], json!({"text": "hello"}), "the reason is stripped");

        // The model saw the external tools after the workspace's, in name order, each with the
        // server's description and schema plus the required reason.
        let requests = setup.mock.requests();
        let names = offered_tools(&requests[0].body);
        let external: Vec<&String> = names.iter().filter(|n| n.contains("__")).collect();
        let mut sorted = external.clone();
        sorted.sort();
        assert_eq!(external, sorted);
        assert_eq!(names.iter().position(|n| n.contains("__")), Some(names.len() - external.len()));
        assert!(names.contains(&echo) && names.contains(&"set_objective".to_string()));
        let offered = requests[0].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["function"]["name"] == echo.as_str())
            .unwrap()
            .clone();
        assert!(offered["function"]["description"].as_str().unwrap().contains("prefixed with `echo: `"));
        let params = &offered["function"]["parameters"];
        assert_eq!(params["properties"]["text"]["type"], "string", "{params}");
        assert_eq!(params["required"], json!(["text", "action_and_reasoning"]));
        // The tool list is the head of the prompt: the same in the turn's second request.
        assert_eq!(requests[0].body["tools"], requests[1].body["tools"]);
        // The model read the result.
        let tool_messages: Vec<&Value> = requests[1].body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .collect();
        assert!(tool_messages[0]["content"].as_str().unwrap().contains("echo: hello"));

        // A step in the conversation, no revision, nothing in the workspace.
        let messages = crate::common::agent::messages(&setup.server, "t").await;
        assert!(json!(messages).to_string().contains(&echo), "{messages:?}");
        let history = setup.server.get("/api/threads/t/history").await.expect(200);
        assert_eq!(history["revisions"], json!([]), "{history}");
        let workspace = setup.server.get("/api/threads/t/workspace").await.expect(200);
        assert_eq!(workspace["objective"], Value::Null);

        // The recording keeps the external steps, and they come back with an import.
        let recording = setup.server.client.get(setup.server.url("/api/threads/t/export")).send().await.unwrap().text().await.unwrap();
        let step_lines: Vec<Value> = recording
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|l| l["type"] == "step")
            .collect();
        assert_eq!(step_lines.len(), 2, "{recording}");
        assert!(step_lines[0].to_string().contains(&echo), "{recording}");
        let imported = setup.server.client.post(setup.server.url("/api/threads/import?id=back"))
            .header("content-type", "application/x-ndjson").body(recording).send().await.unwrap();
        assert_eq!(imported.status(), 201);
        assert_eq!(
            json!(crate::common::agent::messages(&setup.server, "back").await).to_string().matches(&echo).count(),
            json!(messages).to_string().matches(&echo).count()
        );

        let metrics = setup.server.client.get(setup.server.url("/metrics")).send().await.unwrap().text().await.unwrap();
        assert!(
            metrics.lines().any(|l| l.starts_with("haico_mcp_calls_total")
                && l.contains(&format!("server=\"{name}\"")) && l.contains("tool=\"echo\"") && l.contains("outcome=\"success\"")),
            "{metrics}"
        );
        assert!(
            metrics.lines().any(|l| l.starts_with("haico_mcp_server_status")
                && l.contains(&format!("server=\"{name}\"")) && l.contains("status=\"ready\"") && l.ends_with(" 1")),
            "{metrics}"
        );
        setup.cleanup().await;
    }

    async fn errors_timeouts_and_big_results_are_told_to_the_model(engine) {
        needs!(python_mcp);
        let setup = McpSetup::new(
            engine,
            json!({"mcpServers": {"tools": python_entry(&[])}}),
            quick(Duration::from_secs(2)),
            vec![
                Script::tool_calls(vec![
                    call("tools__fail", args(&[("message", json!("the disk is full"))], "I try the failing tool.")),
                    call("tools__slow", args(&[("seconds", json!(20))], "I wait for the slow tool.")),
                    call("tools__big", args(&[("chars", json!(40_000))], "I fetch a long text.")),
                    call("tools__picture", args(&[], "I fetch a picture.")),
                    call("tools__echo", json!({"text": "no reason"})),
                ]),
                Script::text("Some tools failed; I went on."),
            ],
        )
        .await;
        setup.wait_for("tools", "ready", |_| true).await;
        setup.server.create_thread("t").await;
        let frames = whole_turn(crate::common::agent::chat(&setup.server, "t", "Try them").await).await;
        assert_eq!(frames.last().unwrap().data["status"], "completed", "{frames:?}");
        let stepped = steps(&frames);
        assert_eq!(stepped.len(), 5, "{frames:?}");
        // isError: a failed envelope carrying the server's text.
        assert_eq!(stepped[0].1["success"], false);
        assert!(stepped[0].1["error"].as_str().unwrap().contains("the disk is full"), "{:?}", stepped[0]);
        // A timeout.
        assert_eq!(stepped[1].1["success"], false);
        assert!(stepped[1].1["error"].as_str().unwrap().contains("did not answer within 2 s"), "{:?}", stepped[1]);
        // Text cut to the budget, the cut said.
        let summary = stepped[2].1["summary"].as_str().unwrap();
        assert!(summary.len() < 17_000, "{}", summary.len());
        assert!(summary.contains("[cut: the result was 40000 characters"), "{}", &summary[summary.len() - 200..]);
        // Non-text content summarised.
        let picture = stepped[3].1["summary"].as_str().unwrap();
        assert!(picture.contains("[image content (image/png"), "{picture}");
        // No reason: refused before the server is asked.
        assert_eq!(stepped[4].1["success"], false);
        assert!(stepped[4].1["error"].as_str().unwrap().contains("action_and_reasoning"));
        // The turn went on: the model was asked again after the failures.
        assert_eq!(setup.mock.request_count(), 2);
        setup.cleanup().await;
    }

    async fn a_server_killed_mid_call_comes_back_for_the_next_call(engine) {
        needs!(python_mcp);
        let setup = McpSetup::new(
            engine,
            json!({"mcpServers": {"tools": python_entry(&[])}}),
            quick(Duration::from_secs(30)),
            vec![
                Script::tool_calls(vec![call("tools__crash", args(&[], "I try the fragile tool."))]),
                Script::text("It crashed."),
            ],
        )
        .await;
        setup.wait_for("tools", "ready", |_| true).await;
        setup.server.create_thread("t").await;
        let frames = whole_turn(crate::common::agent::chat(&setup.server, "t", "Crash it").await).await;
        assert_eq!(frames.last().unwrap().data["status"], "completed", "{frames:?}");
        let stepped = steps(&frames);
        assert_eq!(stepped[0].1["success"], false);
        assert!(stepped[0].1["error"].as_str().unwrap().contains("closed its connection during the call"), "{:?}", stepped[0]);

        // It is started again, and the next call works.
        setup.wait_for("tools", "ready", |_| true).await;
        setup.mock.push(Script::tool_calls(vec![call(
            "tools__echo",
            args(&[("text", json!("again"))], "I check the tool is back."),
        )]));
        setup.mock.push(Script::text("It is back."));
        let frames = whole_turn(crate::common::agent::chat(&setup.server, "t", "Again").await).await;
        let stepped = steps(&frames);
        assert_eq!(stepped[0].1, json!({"success": true, "summary": "echo: again"}), "{frames:?}");
        setup.cleanup().await;
    }

    async fn cancelling_a_turn_stops_waiting_for_a_slow_call(engine) {
        needs!(python_mcp);
        let setup = McpSetup::new(
            engine,
            json!({"mcpServers": {"tools": python_entry(&[])}}),
            quick(Duration::from_secs(60)),
            vec![
                Script::tool_calls(vec![call("tools__slow", args(&[("seconds", json!(30))], "I wait for the slow tool."))]),
                Script::text("never asked"),
            ],
        )
        .await;
        setup.wait_for("tools", "ready", |_| true).await;
        setup.server.create_thread("t").await;
        let mut chat = crate::common::agent::chat(&setup.server, "t", "Wait").await;
        crate::common::agent::until_event(&mut chat, "turn").await;
        // The call is under way once the model's request was answered.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        while setup.mock.request_count() < 1 {
            assert!(tokio::time::Instant::now() < deadline, "the model was never asked");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let started = std::time::Instant::now();
        let reply = setup.server.post("/api/threads/t/cancel", &json!({})).await;
        assert_eq!(reply.expect(202), json!({"cancelled": true}));
        let frames = crate::common::agent::until_done(&mut chat).await;
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
        assert_eq!(frames.last().unwrap().data["status"], "cancelled", "{frames:?}");
        let stepped = steps(&frames);
        assert_eq!(stepped.len(), 1, "{frames:?}");
        assert!(stepped[0].1["error"].as_str().unwrap().contains("cancelled while waiting"), "{:?}", stepped[0]);
        assert_eq!(setup.mock.request_count(), 1, "the model is not asked again");
        setup.cleanup().await;
    }

    async fn a_tool_list_that_changes_reaches_the_next_turn(engine) {
        needs!(python_mcp);
        let setup = McpSetup::new(
            engine,
            json!({"mcpServers": {"tools": python_entry(&[])}}),
            quick(Duration::from_secs(30)),
            vec![
                Script::tool_calls(vec![call("tools__grow", args(&[("name", json!("fresh"))], "I add a tool."))]),
                Script::text("Added."),
            ],
        )
        .await;
        setup.wait_for("tools", "ready", |_| true).await;
        setup.server.create_thread("t").await;
        let frames = whole_turn(crate::common::agent::chat(&setup.server, "t", "Grow").await).await;
        assert_eq!(steps(&frames)[0].1["summary"], "added fresh", "{frames:?}");
        assert!(!offered_tools(&setup.mock.requests()[0].body).contains(&"tools__fresh".to_string()));
        setup
            .wait_for("tools", "ready", |s| s["tools"].as_array().unwrap().contains(&json!("fresh")))
            .await;

        setup.mock.push(Script::tool_calls(vec![call("tools__fresh", args(&[], "I use the new tool."))]));
        setup.mock.push(Script::text("It works."));
        let frames = whole_turn(crate::common::agent::chat(&setup.server, "t", "Use it").await).await;
        assert_eq!(steps(&frames)[0].1, json!({"success": true, "summary": "fresh works"}), "{frames:?}");
        assert!(offered_tools(&setup.mock.requests()[2].body).contains(&"tools__fresh".to_string()));
        setup.cleanup().await;
    }

    async fn servers_that_cannot_start_leave_haico_working(engine) {
        needs!(python_mcp);
        let setup = McpSetup::new(
            engine,
            json!({"mcpServers": {
                "broken": python_entry(&["--fail-at-start"]),
                "missing": {"command": "/nonexistent/mcp-server"},
                "tools": python_entry(&[]),
            }}),
            quick(Duration::from_secs(30)),
            vec![
                Script::tool_calls(vec![
                    call("broken__echo", args(&[("text", json!("x"))], "I try the broken server.")),
                    call("tools__echo", args(&[("text", json!("fine"))], "I try the working server.")),
                ]),
                Script::text("One of two worked."),
            ],
        )
        .await;
        let broken = setup
            .wait_for("broken", "failed", |s| s["error"].as_str().is_some_and(|e| e.contains("missing TOOLS_SERVER_KEY")))
            .await;
        assert_eq!(broken["tools"], json!([]));
        let missing = setup.wait_for("missing", "failed", |_| true).await;
        assert!(missing["error"].as_str().unwrap().contains("could not start `/nonexistent/mcp-server`"), "{missing}");
        setup.wait_for("tools", "ready", |_| true).await;
        let names: Vec<Value> = setup.statuses().await.iter().map(|s| s["name"].clone()).collect();
        assert_eq!(names, [json!("broken"), json!("missing"), json!("tools")]);

        setup.server.create_thread("t").await;
        let frames = whole_turn(crate::common::agent::chat(&setup.server, "t", "Try all").await).await;
        assert_eq!(frames.last().unwrap().data["status"], "completed", "{frames:?}");
        let offered = offered_tools(&setup.mock.requests()[0].body);
        assert!(offered.iter().all(|n| !n.starts_with("broken__")), "{offered:?}");
        let stepped = steps(&frames);
        assert!(stepped[0].1["error"].as_str().unwrap().contains("`broken` is not available"), "{:?}", stepped[0]);
        assert_eq!(stepped[1].1["summary"], "echo: fine");
        setup.server.get("/healthz").await.expect(200);
        setup.cleanup().await;
    }
}
