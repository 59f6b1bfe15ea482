//! `haico mcp --thread ID` over stdio, driven by rmcp's client through the real binary on a
//! temporary SQLite file: the tools, the resources and their notifications, protocol errors,
//! and the raw wire (garbage on stdin, the classic `initialize`, logs only on stderr).
// `resources/subscribe` is deprecated in rmcp in favour of 2026-07-28's `subscriptions/listen`;
// sessions of the earlier revisions still use it, so it is tested here.
#![allow(deprecated)]

use crate::common;
use crate::common::mcp as mcp_support;

use std::{process::Stdio, time::Duration};

use common::{Engine, TestDb, png_size, server::TestServer, tid};
use mcp_support::*;
use rmcp::model::{
    ErrorCode, ReadResourceRequestParams, SubscribeRequestParams, SubscriptionFilter,
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Notifications of changes made in the same process arrive at once; changes made by another
/// process are noticed by the poller (every 250 ms).
const NOTE: Duration = Duration::from_secs(3);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_are_the_api_tools_and_change_the_workspace() {
    let db = TestDb::new(Engine::Sqlite).await;
    let (client, _notes) = stdio_client(&db.url, "stdio-tools", Lifecycle::Initialize).await;

    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("haico")
    );
    assert!(info.capabilities.tools.is_some());
    let resources = info.capabilities.resources.clone().expect("resources");
    assert_eq!(
        (resources.subscribe, resources.list_changed),
        (Some(true), Some(true))
    );

    let tools = client.list_all_tools().await.unwrap();
    let api = serde_json::to_value(haico::tools::tool_specs()).unwrap();
    assert_tools_match(&tools, &api);

    // The thread was created by `haico mcp`; tool calls change it.
    let summary = call_ok(
        &client,
        "set_objective",
        json!({"objective": "Plan a week in Lisbon", "action_and_reasoning": "Noting the goal."}),
    )
    .await;
    assert!(!summary.is_empty());
    call_ok(
        &client,
        "add_todos",
        json!({"steps": [{"text": "Book flights"}, {"text": "Pick a hotel"}],
               "action_and_reasoning": "Outlining the first steps."}),
    )
    .await;
    let listed = call_ok(
        &client,
        "list_todos",
        json!({"action_and_reasoning": "Checking the plan."}),
    )
    .await;
    assert!(listed.contains("1. [ ] Book flights"), "{listed}");

    let mut repo = db.db.begin_read().await.unwrap();
    let workspace = repo.threads().workspace(&tid("stdio-tools")).await.unwrap();
    repo.rollback().await.unwrap();
    assert_eq!(
        workspace.objective.as_deref(),
        Some("Plan a week in Lisbon")
    );
    assert_eq!(workspace.plan.len(), 2);

    // A chart: the envelope carries the artifact and its id.
    let result = call(
        &client,
        "chart_generator",
        json!({"chart_type": "bar", "title": "Budget",
               "data": {"labels": ["Flights", "Hotel"], "series": [{"name": "EUR", "values": [300, 700]}]},
               "action_and_reasoning": "Showing where the money goes."}),
    )
    .await
    .unwrap();
    let env = envelope(&result);
    assert_eq!(env["success"], true);
    assert_eq!(env["artifact"]["artifact_type"], "bar_chart");
    assert!(env["artifact_id"].as_i64().is_some());

    // Invalid arguments are the tool's failure envelope, with isError.
    for bad in [
        json!({"objective": "No reason given"}),
        json!({"objective": 42, "action_and_reasoning": "Setting it."}),
        json!({"objective": "", "action_and_reasoning": "Clearing it."}),
    ] {
        let result = call(&client, "set_objective", bad.clone()).await.unwrap();
        let env = envelope(&result);
        assert_eq!(env["success"], false, "{bad}");
        assert!(env["error"].as_str().is_some_and(|e| !e.is_empty()));
    }
    // An unknown tool is a protocol error (-32602), and the server keeps serving.
    let err = call(
        &client,
        "no_such_tool",
        json!({"action_and_reasoning": "Trying."}),
    )
    .await
    .unwrap_err();
    assert_eq!(error_code(&err), ErrorCode::INVALID_PARAMS);
    let listed = call_ok(
        &client,
        "list_todos",
        json!({"action_and_reasoning": "Again."}),
    )
    .await;
    assert!(listed.contains("2. [ ] Pick a hotel"), "{listed}");

    client.cancel().await.unwrap();
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_are_readable_and_announce_changes_from_anyone() {
    let db = TestDb::new(Engine::Sqlite).await;
    let thread = "stdio-resources";
    let (client, mut notes) = stdio_client(&db.url, thread, Lifecycle::Initialize).await;
    // The web UI's server, in this test process, on the same file.
    let server = TestServer::start(&db.db).await;

    let listed = client.list_all_resources().await.unwrap();
    let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
    for name in ["objective", "document", "plan", "preferences", "artifacts"] {
        assert!(uris.contains(&panel(thread, name).as_str()), "{uris:?}");
    }
    assert_eq!(
        read_json(&client, &panel(thread, "objective")).await,
        json!({"objective": null})
    );
    let templates = client.list_all_resource_templates().await.unwrap();
    let templates: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert_eq!(
        templates,
        [
            format!("haico://thread/{thread}/artifacts/{{artifact_id}}"),
            format!("haico://thread/{thread}/artifacts/{{artifact_id}}/chart.svg"),
            format!("haico://thread/{thread}/artifacts/{{artifact_id}}/chart.png"),
            format!("haico://thread/{thread}/revisions/{{rev}}"),
        ]
    );
    let history = format!("haico://thread/{thread}/history");
    assert!(uris.contains(&history.as_str()), "{uris:?}");
    assert_eq!(
        read_json(&client, &history).await,
        json!({"revisions": [], "next_before": null})
    );
    assert_eq!(
        read_json(&client, &panel(thread, "document")).await,
        json!({"title": "", "content": "", "version": 0})
    );

    client
        .subscribe(SubscribeRequestParams::new(panel(thread, "plan")))
        .await
        .unwrap();
    client
        .subscribe(SubscribeRequestParams::new(panel(thread, "preferences")))
        .await
        .unwrap();

    // A change through MCP itself.
    call_ok(
        &client,
        "add_todos",
        json!({"steps": [{"text": "Pack"}], "action_and_reasoning": "Adding a step."}),
    )
    .await;
    expect_note(&mut notes, &Note::Updated(panel(thread, "plan")), NOTE).await;
    // The change is the history's first revision, and the workspace at it can be read.
    let revisions = read_json(&client, &history).await["revisions"].clone();
    assert_eq!(revisions[0]["rev"], json!(1));
    assert_eq!(revisions[0]["tool"], json!("add_todos"));
    assert_eq!(
        revisions[0]["action_and_reasoning"],
        json!("Adding a step.")
    );
    let at_one = read_json(&client, &format!("haico://thread/{thread}/revisions/1")).await;
    assert_eq!(at_one["todos"][0]["text"], json!("Pack"));
    let at_zero = read_json(&client, &format!("haico://thread/{thread}/revisions/0")).await;
    assert_eq!(at_zero["todos"], json!([]));
    assert_eq!(
        read_json(&client, &panel(thread, "plan")).await[0]["text"],
        "Pack"
    );

    // A change by the person, through the REST user path of another process's view.
    let pref = server
        .post(
            &format!("/api/threads/{thread}/preferences"),
            &json!({"title": "Quiet hotel", "kind": "hard", "locked": true}),
        )
        .await
        .expect(201);
    expect_note(
        &mut notes,
        &Note::Updated(panel(thread, "preferences")),
        NOTE,
    )
    .await;

    // The locked preference is skipped by the agent path, and reported.
    let summary = call(
        &client,
        "update_preferences",
        json!({"updates": [{"index": 1, "title": "Any hotel"}],
               "action_and_reasoning": "Loosening the hotel wish."}),
    )
    .await
    .unwrap();
    let env = envelope(&summary);
    let text = env.to_string();
    assert!(text.contains("locked"), "{text}");
    let prefs = read_json(&client, &panel(thread, "preferences")).await;
    assert_eq!(prefs[0]["title"], "Quiet hotel");
    assert_eq!(prefs[0]["locked"], true);
    assert_eq!(prefs[0]["id"], pref["id"]);

    // A new chart: the artifacts are a new resource list; the chart is readable as SVG and as
    // PNG, and the call's result carries the PNG beside its envelope.
    let chart = call(
        &client,
        "chart_generator",
        json!({"chart_type": "pie", "title": "Days",
               "data": {"labels": ["Beach", "City"], "series": [{"name": "days", "values": [3, 4]}]},
               "action_and_reasoning": "Showing the split of days."}),
    )
    .await
    .unwrap();
    let id = envelope(&chart)["artifact_id"].as_i64().unwrap();
    let image = chart_png(&chart).expect("the chart as an image");
    assert_eq!(png_size(&image), (1600, 960));
    expect_note(&mut notes, &Note::ListChanged, NOTE).await;
    let svg_uri = format!("haico://thread/{thread}/artifacts/{id}/chart.svg");
    let listed = client.list_all_resources().await.unwrap();
    assert!(listed.iter().any(|r| r.uri == svg_uri), "{listed:?}");
    let (mime, svg) = read_blob(&client, &svg_uri).await;
    assert_eq!(mime.as_deref(), Some("image/svg+xml"));
    assert!(String::from_utf8(svg).unwrap().contains("<svg"));
    let png_uri = format!("haico://thread/{thread}/artifacts/{id}/chart.png");
    let listed = listed
        .iter()
        .find(|r| r.uri == png_uri)
        .expect("chart.png is listed");
    assert_eq!(listed.mime_type.as_deref(), Some("image/png"));
    let (mime, png) = read_blob(&client, &png_uri).await;
    assert_eq!(mime.as_deref(), Some("image/png"));
    assert_eq!(png, image, "the resource is the image the call returned");
    let artifact = read_json(&client, &format!("haico://thread/{thread}/artifacts/{id}")).await;
    assert_eq!(artifact["artifact_type"], "pie_chart");
    assert_eq!(artifact["payload"]["title"], "Days");

    // Unknown resources: "resource not found", and the session goes on.
    for uri in [
        "haico://thread/other-thread/plan".to_string(),
        format!("haico://thread/{thread}/artifacts/999999"),
        format!("haico://thread/{thread}/artifacts/999999/chart.png"),
        format!("haico://thread/{thread}/artifacts/{id}/chart.jpg"),
        format!("haico://thread/{thread}/nothing"),
        "file:///etc/passwd".to_string(),
    ] {
        let err = client
            .read_resource(ReadResourceRequestParams::new(&uri))
            .await
            .unwrap_err();
        assert_eq!(error_code(&err), ErrorCode::RESOURCE_NOT_FOUND, "{uri}");
    }
    let err = client
        .subscribe(SubscribeRequestParams::new(
            "haico://thread/other-thread/plan",
        ))
        .await
        .unwrap_err();
    assert_eq!(error_code(&err), ErrorCode::RESOURCE_NOT_FOUND);
    assert!(read_json(&client, &panel(thread, "plan")).await.is_array());

    client.cancel().await.unwrap();
    server.shutdown().await;
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_client_discovers_and_listens() {
    let db = TestDb::new(Engine::Sqlite).await;
    let thread = "stdio-discover";
    let (client, _notes) = stdio_client(&db.url, thread, Lifecycle::Discover).await;
    let server = TestServer::start(&db.db).await;

    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 16);
    let filter = SubscriptionFilter::builder()
        .resource_subscription(panel(thread, "objective"))
        .resource_subscription("haico://thread/someone-else/objective")
        .resources_list_changed()
        .build();
    let mut subscription = client.listen(filter).await.unwrap();
    assert_eq!(
        subscription.acknowledged().resource_subscriptions,
        Some(vec![panel(thread, "objective")]),
        "only this thread's resources are accepted"
    );

    call_ok(
        &client,
        "set_objective",
        json!({"objective": "Ship it", "action_and_reasoning": "Recording the goal."}),
    )
    .await;
    let note = tokio::time::timeout(NOTE, subscription.next())
        .await
        .expect("a notification in time")
        .unwrap()
        .expect("the subscription is open");
    match note {
        rmcp::model::ServerNotification::ResourceUpdatedNotification(update) => {
            assert_eq!(update.params.uri, panel(thread, "objective"));
        }
        other => panic!("unexpected notification {other:?}"),
    }
    // The person edits the objective in the web UI (another process's view of the file).
    server
        .request(
            reqwest::Method::PUT,
            &format!("/api/threads/{thread}/objective"),
            Some(&json!({"objective": "Ship it on Friday"})),
        )
        .await
        .expect(200);
    let note = tokio::time::timeout(NOTE, subscription.next())
        .await
        .expect("a notification in time")
        .unwrap()
        .expect("the subscription is open");
    assert!(
        matches!(note, rmcp::model::ServerNotification::ResourceUpdatedNotification(ref u) if u.params.uri == panel(thread, "objective")),
        "{note:?}"
    );
    assert_eq!(
        read_json(&client, &panel(thread, "objective")).await,
        json!({"objective": "Ship it on Friday"})
    );

    subscription.cancel().await.unwrap();
    client.cancel().await.unwrap();
    server.shutdown().await;
    db.cleanup().await;
}

type Lines = tokio::io::Lines<BufReader<tokio::process::ChildStdout>>;

async fn send(stdin: &mut tokio::process::ChildStdin, line: &str) {
    stdin.write_all(line.as_bytes()).await.unwrap();
    stdin.write_all(b"\n").await.unwrap();
    stdin.flush().await.unwrap();
}

async fn recv(stdout: &mut Lines) -> Value {
    let line = tokio::time::timeout(WAIT, stdout.next_line())
        .await
        .expect("an answer in time")
        .unwrap()
        .expect("stdout open");
    serde_json::from_str(&line).unwrap_or_else(|_| panic!("stdout carried non-JSON: {line:?}"))
}

/// Speaks raw JSON-RPC lines to the binary: garbage is ignored, a JSON value that is no
/// message is an Invalid Request, the classic `initialize` negotiates, errors do not end the
/// session, and stdout carries nothing but JSON-RPC.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wire_survives_garbage_and_speaks_the_classic_handshake() {
    let db = TestDb::new(Engine::Sqlite).await;
    let mut child = haico_command()
        .args(["mcp", "--thread", "raw-wire"])
        .env("HAICO_DATABASE_URL", &db.url)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let stderr = child.stderr.take().unwrap();
    let logs = tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        let mut all = String::new();
        while let Ok(Some(line)) = lines.next_line().await {
            all.push_str(&line);
            all.push('\n');
        }
        all
    });

    send(&mut stdin, "this is not json").await;
    send(&mut stdin, "{\"hello\": \"world\"}").await;
    let invalid = recv(&mut stdout).await;
    assert_eq!(invalid["error"]["code"], -32600, "{invalid}");

    send(
        &mut stdin,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
    )
    .await;
    let init = recv(&mut stdout).await;
    assert_eq!(init["id"], 1);
    assert_eq!(init["result"]["protocolVersion"], "2024-11-05", "{init}");
    assert_eq!(init["result"]["serverInfo"]["name"], "haico");
    send(
        &mut stdin,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;

    send(&mut stdin, "{{{ still garbage").await;
    send(
        &mut stdin,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope","arguments":{}}}"#,
    )
    .await;
    let unknown = recv(&mut stdout).await;
    assert_eq!(unknown["id"], 2);
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");

    send(
        &mut stdin,
        r#"{"jsonrpc":"2.0","id":3,"method":"no/such/method","params":{}}"#,
    )
    .await;
    let missing = recv(&mut stdout).await;
    assert_eq!(missing["id"], 3);
    assert_eq!(missing["error"]["code"], -32601, "{missing}");

    send(&mut stdin, r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add_preferences","arguments":{"items":[{"title":"Vegetarian","kind":"sometimes"}],"action_and_reasoning":"Recording a diet."}}}"#)
        .await;
    let invalid_args = recv(&mut stdout).await;
    assert_eq!(invalid_args["id"], 4);
    assert_eq!(invalid_args["result"]["isError"], true, "{invalid_args}");
    assert_eq!(
        invalid_args["result"]["structuredContent"]["success"],
        false
    );

    send(
        &mut stdin,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#,
    )
    .await;
    let list = recv(&mut stdout).await;
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 16);

    send(&mut stdin, r#"{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"haico://thread/raw-wire/nothing"}}"#)
        .await;
    let not_found = recv(&mut stdout).await;
    assert_eq!(not_found["error"]["code"], -32002, "{not_found}");

    send(&mut stdin, r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#).await;
    assert_eq!(recv(&mut stdout).await["id"], 7);

    drop(stdin);
    let status = tokio::time::timeout(WAIT, child.wait())
        .await
        .expect("haico mcp exits when stdin closes")
        .unwrap();
    assert!(status.success(), "{status}");
    assert_eq!(
        tokio::time::timeout(WAIT, stdout.next_line())
            .await
            .unwrap()
            .unwrap(),
        None,
        "nothing else on stdout"
    );
    let logs = logs.await.unwrap();
    assert!(
        logs.contains("serving MCP on stdio"),
        "logs go to stderr: {logs}"
    );
    db.cleanup().await;
}

/// Every protocol revision with a handshake is answered with itself; a client that asks for
/// one without a handshake (or an unknown one) gets the newest with a handshake.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_negotiates_each_protocol_version() {
    let db = TestDb::new(Engine::Sqlite).await;
    for (asked, answered) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
    ] {
        let mut child = haico_command()
            .args(["mcp", "--thread", "versions"])
            .env("HAICO_DATABASE_URL", &db.url)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "v", "version": "0"}}});
        stdin
            .write_all(format!("{init}\n").as_bytes())
            .await
            .unwrap();
        let line = tokio::time::timeout(WAIT, stdout.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let reply: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(
            reply["result"]["protocolVersion"], answered,
            "asked {asked}: {reply}"
        );
        drop(stdin);
        tokio::time::timeout(WAIT, child.wait())
            .await
            .unwrap()
            .unwrap();
    }
    db.cleanup().await;
}

/// A local `haico mcp` acts as the thread's owner, or as the account `--as` names: its changes
/// record that person; an unknown name is refused before anything starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_acts_as_the_owner_or_the_named_person() {
    use haico::{ThreadId, people::People, workspace::Workspaces};
    let db = TestDb::new(Engine::Sqlite).await;
    let people = People::new(db.db.clone());
    let (olga, _) = people.create_user("olga", true, None).await.unwrap();
    people.create_user("sam", false, None).await.unwrap();
    let thread = ThreadId::parse("owned").unwrap();
    let olgas = Workspaces::standalone(db.db.clone()).acting_as(Some(haico::workspace::Actor {
        id: olga.id,
        name: olga.name.clone(),
    }));
    olgas.threads().create(&thread, None).await.unwrap();

    for (as_name, objective) in [(None, "By the owner"), (Some("sam"), "By sam")] {
        let (client, _notes) =
            stdio_client_as(&db.url, "owned", as_name, Lifecycle::Initialize).await;
        call_ok(
            &client,
            "set_objective",
            json!({"objective": objective, "action_and_reasoning": "Setting it."}),
        )
        .await;
        client.cancel().await.unwrap();
    }
    let page = olgas.history(&thread, None, None).await.unwrap();
    let by: Vec<Option<&str>> = page.revisions.iter().map(|r| r.by.as_deref()).collect();
    assert_eq!(by, [Some("sam"), Some("olga")], "newest first");

    let out = haico_command()
        .args(["mcp", "--thread", "owned", "--as", "nobody"])
        .env("HAICO_DATABASE_URL", &db.url)
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--as nobody") && err.contains("haico user list"),
        "{err}"
    );
    db.cleanup().await;
}

/// Reads a resource that must be one blob: its MIME type and its decoded bytes.
async fn read_blob(client: &Client, uri: &str) -> (Option<String>, Vec<u8>) {
    let read = client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .unwrap();
    match &read.contents[..] {
        [
            rmcp::model::ResourceContents::BlobResourceContents {
                blob, mime_type, ..
            },
        ] => {
            use base64::Engine as _;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(blob)
                .unwrap();
            (mime_type.clone(), bytes)
        }
        other => panic!("expected one blob at {uri}, got {other:?}"),
    }
}
