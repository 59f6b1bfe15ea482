//! One rule, one answer: every rule of the workspace gives the same result and the same error
//! text whichever path sends the input — the agent's tools (here through the tools endpoint,
//! exactly what the model and MCP clients get) or the person's REST user path. Each failure is
//! also checked to have written nothing. Runs on SQLite and PostgreSQL against a real server.

use crate::common;

use common::server::{TestServer, setup, teardown};
use haico::workspace::{
    MAX_DEPTH, MAX_DOCUMENT_CHARS, MAX_DOCUMENT_TITLE_CHARS, MAX_OBJECTIVE_CHARS, MAX_STEP_CHARS,
    MAX_SUBTITLE_CHARS, MAX_TITLE_CHARS,
};
use serde_json::{Value, json};

/// The agent path's failure text, without the envelope's "invalid arguments: " prefix.
async fn agent_error(server: &TestServer, thread: &str, tool: &str, mut args: Value) -> String {
    args["action_and_reasoning"] = json!("Check a rule.");
    let before = server.workspace(thread).await;
    let envelope = server.tool(thread, tool, args.clone()).await;
    assert_eq!(
        envelope["success"],
        json!(false),
        "{tool}({args}) passed: {envelope}"
    );
    assert_eq!(
        server.workspace(thread).await,
        before,
        "{tool}({args}) wrote something"
    );
    let text = envelope["error"].as_str().expect("error text");
    text.strip_prefix("invalid arguments: ")
        .unwrap_or(text)
        .to_string()
}

/// The user path's 400 text; the request must change nothing.
async fn user_error(
    server: &TestServer,
    thread: &str,
    method: &str,
    path: &str,
    body: Value,
) -> String {
    let before = server.workspace(thread).await;
    let reply = match method {
        "POST" => server.post(path, &body).await,
        "PATCH" => server.patch(path, &body).await,
        "PUT" => {
            server
                .request(reqwest::Method::PUT, path, Some(&body))
                .await
        }
        other => panic!("no such method {other}"),
    };
    let text = reply.error(400);
    assert_eq!(
        server.workspace(thread).await,
        before,
        "{method} {path} wrote something"
    );
    text
}

/// The part of a field error after the field's name: "`steps[0].text` must not be empty" and
/// "`text` must not be empty" name different fields (the inputs differ) but state one rule.
fn rule(text: &str) -> &str {
    match text
        .strip_prefix('`')
        .and_then(|rest| rest.split_once("` "))
    {
        Some((_, rule)) => rule,
        None => text,
    }
}

backend_tests! {
    async fn the_objective_is_one_checked_line_on_both_paths(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("t").await;
        let too_long = "o".repeat(MAX_OBJECTIVE_CHARS + 1);
        for bad in ["", "  \n\t ", too_long.as_str()] {
            let agent = agent_error(&server, "t", "set_objective", json!({"objective": bad})).await;
            let user = user_error(&server, "t", "PUT", "/api/threads/t/objective", json!({"objective": bad})).await;
            assert_eq!(agent, user, "objective {bad:?}");
        }
        // The same messy input becomes the same stored line.
        let messy = "  Plan a\n trip   to\tLisbon ";
        server.tool_ok("t", "set_objective", json!({"objective": messy, "action_and_reasoning": "Aim."})).await;
        let by_agent = server.workspace("t").await["objective"].clone();
        let put = server.request(reqwest::Method::PUT, "/api/threads/t/objective", Some(&json!({"objective": messy}))).await.expect(200);
        assert_eq!(put["objective"], by_agent);
        assert_eq!(by_agent, json!("Plan a trip to Lisbon"));
        teardown(tdb, server).await;
    }

    async fn document_titles_and_bodies_follow_one_rule(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("t").await;
        // A title is trimmed, then measured: padding never makes a title too long.
        let padded = format!("  {}  ", "t".repeat(MAX_DOCUMENT_TITLE_CHARS));
        server.tool_ok("t", "update_document", json!({"content": "a", "title": padded, "action_and_reasoning": "Write."})).await;
        let agent_title = server.workspace("t").await["document"]["title"].clone();
        let put = server.request(reqwest::Method::PUT, "/api/threads/t/document", Some(&json!({"content": "a", "title": padded}))).await.expect(200);
        assert_eq!(put["title"], agent_title);
        assert_eq!(agent_title.as_str().map(str::len), Some(MAX_DOCUMENT_TITLE_CHARS));

        let too_long = "t".repeat(MAX_DOCUMENT_TITLE_CHARS + 1);
        let agent = agent_error(&server, "t", "update_document", json!({"content": "b", "title": too_long})).await;
        let user = user_error(&server, "t", "PUT", "/api/threads/t/document", json!({"content": "b", "title": too_long})).await;
        assert_eq!(agent, user);
        assert!(agent.contains("the limit is 300"), "{agent}");

        // The body: the same limit and the same text on both paths.
        let too_big = "b".repeat(MAX_DOCUMENT_CHARS + 1);
        let agent = agent_error(&server, "t", "update_document", json!({"content": too_big})).await;
        let user = user_error(&server, "t", "PUT", "/api/threads/t/document", json!({"content": too_big})).await;
        assert_eq!(agent, user);
        assert!(agent.contains(&MAX_DOCUMENT_CHARS.to_string()), "{agent}");

        // An in-place edit keeps the same limit: a body one character too long is refused on
        // the agent's edit_document as on the person's PUT, naming the same length and limit,
        // and the body at exactly the limit is accepted by both.
        let near = format!("{}#", "b".repeat(MAX_DOCUMENT_CHARS - 2));
        server.tool_ok("t", "update_document", json!({"content": near, "action_and_reasoning": "Fill."})).await;
        let agent = agent_error(&server, "t", "edit_document", json!({"edits": [{"old_text": "#", "new_text": "###"}]})).await;
        let user = user_error(&server, "t", "PUT", "/api/threads/t/document", json!({"content": format!("{near}##")})).await;
        let stated = format!("{} characters long", MAX_DOCUMENT_CHARS + 1);
        let limit = format!("the limit is {MAX_DOCUMENT_CHARS}");
        for text in [&agent, &user] {
            assert!(text.contains(&stated) && text.contains(&limit), "{agent} / {user}");
        }
        server.tool_ok("t", "edit_document", json!({"edits": [{"old_text": "#", "new_text": "##"}], "action_and_reasoning": "Grow."})).await;
        let by_agent = server.workspace("t").await["document"]["content"].clone();
        let put = server.request(reqwest::Method::PUT, "/api/threads/t/document", Some(&json!({"content": by_agent}))).await.expect(200);
        assert_eq!(put["content"].as_str().map(|c| c.chars().count()), Some(MAX_DOCUMENT_CHARS));
        teardown(tdb, server).await;
    }

    async fn step_texts_depths_and_placement_agree(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("t").await;
        let long = "s".repeat(MAX_STEP_CHARS + 1);
        for bad in ["", "   ", long.as_str()] {
            let agent = agent_error(&server, "t", "add_todos", json!({"steps": [{"text": bad}]})).await;
            let user = user_error(&server, "t", "POST", "/api/threads/t/todos", json!({"text": bad})).await;
            assert_eq!(rule(&agent), rule(&user), "step text {bad:?}: {agent} / {user}");
            let agent = agent_error(&server, "t", "update_todos", json!({"updates": [{"index": 1, "text": bad}]})).await;
            assert_eq!(rule(&agent), rule(&user), "rewrite {bad:?}: {agent} / {user}");
        }

        // Nested under a step, a new step goes after the parent's last sub-step, one level
        // deeper, whether the agent names the parent by index or the person by id.
        let outline = json!([
            {"text": "A"}, {"text": "A1", "depth": 1}, {"text": "A2", "depth": 1}, {"text": "B"}
        ]);
        for thread in ["agent", "user"] {
            server.create_thread(thread).await;
            server.tool_ok(thread, "add_todos", json!({"steps": outline, "action_and_reasoning": "Lay out."})).await;
        }
        server.tool_ok("agent", "add_todos", json!({"steps": [{"text": "A3"}], "parent_index": 1, "action_and_reasoning": "Nest."})).await;
        let a_id = server.workspace("user").await["todos"][0]["id"].as_i64().unwrap();
        server.post("/api/threads/user/todos", &json!({"text": "A3", "parent_id": a_id})).await.expect(201);
        let shape = |ws: Value| -> Vec<(String, i64)> {
            ws["todos"].as_array().unwrap().iter()
                .map(|s| (s["text"].as_str().unwrap().to_string(), s["depth"].as_i64().unwrap()))
                .collect()
        };
        let agent_plan = shape(server.workspace("agent").await);
        assert_eq!(agent_plan, shape(server.workspace("user").await));
        assert_eq!(agent_plan[3], ("A3".to_string(), 1));

        // Neither path nests deeper than MAX_DEPTH.
        let deep: Vec<Value> = (0..=MAX_DEPTH).map(|d| json!({"text": format!("d{d}"), "depth": d})).collect();
        server.create_thread("deep").await;
        server.tool_ok("deep", "add_todos", json!({"steps": deep, "action_and_reasoning": "Go deep."})).await;
        let deepest = server.workspace("deep").await["todos"].as_array().unwrap().last().unwrap()["id"].as_i64().unwrap();
        let agent = agent_error(&server, "deep", "add_todos", json!({"steps": [{"text": "x"}], "parent_index": MAX_DEPTH + 1})).await;
        let user = user_error(&server, "deep", "POST", "/api/threads/deep/todos", json!({"text": "x", "parent_id": deepest})).await;
        let limit = format!("the plan nests at most {MAX_DEPTH} levels");
        assert!(agent.ends_with(&limit) && user.ends_with(&limit), "{agent} / {user}");
        teardown(tdb, server).await;
    }

    async fn preference_texts_agree_and_locks_split_the_paths(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("t").await;
        let long_title = "p".repeat(MAX_TITLE_CHARS + 1);
        let long_subtitle = "s".repeat(MAX_SUBTITLE_CHARS + 1);
        for (title, subtitle) in [("", None), ("  ", None), (long_title.as_str(), None), ("ok", Some(long_subtitle.as_str()))] {
            let agent = agent_error(&server, "t", "add_preferences", json!({"items": [{"title": title, "subtitle": subtitle}]})).await;
            let user = user_error(&server, "t", "POST", "/api/threads/t/preferences", json!({"title": title, "subtitle": subtitle})).await;
            assert_eq!(rule(&agent), rule(&user), "{title:?}/{subtitle:?}: {agent} / {user}");
        }
        // A blank subtitle means none, on both paths.
        server.tool_ok("t", "add_preferences", json!({"items": [{"title": "Agent's", "subtitle": "  "}], "action_and_reasoning": "Note."})).await;
        let mine = server.post("/api/threads/t/preferences", &json!({"title": "Mine", "subtitle": "  "})).await.expect(201);
        let listed = server.workspace("t").await["preferences"].clone();
        assert_eq!(listed[0]["subtitle"], json!(null));
        assert_eq!(mine["subtitle"], json!(null));

        // A locked preference: the agent's change is skipped and reported, the person's applies.
        let id = mine["id"].as_i64().unwrap();
        server.patch(&format!("/api/threads/t/preferences/{id}"), &json!({"locked": true})).await.expect(200);
        let summary = server.tool_ok("t", "update_preferences", json!({"updates": [{"index": 2, "title": "Changed"}], "action_and_reasoning": "Rename."})).await;
        assert!(summary.contains("locked by the user"), "{summary}");
        assert_eq!(server.workspace("t").await["preferences"][1]["title"], json!("Mine"));
        let changed = server.patch(&format!("/api/threads/t/preferences/{id}"), &json!({"title": "Changed"})).await.expect(200);
        assert_eq!(changed["title"], json!("Changed"));
        assert_eq!(changed["locked"], json!(true));
        teardown(tdb, server).await;
    }

    async fn unknown_threads_and_artifacts_read_the_same(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("t").await;
        // An unknown thread: the tools endpoint and the user path say the same.
        let tool = server.post("/api/threads/ghost/tools/set_objective", &json!({"objective": "x", "action_and_reasoning": "Try."})).await.error(404);
        let user = server.get("/api/threads/ghost/objective").await.error(404);
        assert_eq!(tool, user);
        // An artifact of another thread is not found in this one, on both paths.
        server.create_thread("other").await;
        let chart = json!({"chart_type": "bar", "title": "C", "data": {"labels": ["a"], "series": [{"name": "s", "values": [1]}]}, "action_and_reasoning": "Draw."});
        let id = server.tool("other", "chart_generator", chart).await["artifact_id"].as_i64().unwrap();
        let agent = agent_error(&server, "t", "get_artifact", json!({"artifact_id": id})).await;
        let user = server.get(&format!("/api/threads/t/artifacts/{id}")).await.error(404);
        assert_eq!(agent, user);
        teardown(tdb, server).await;
    }
}
