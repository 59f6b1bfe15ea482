//! Every route of the server, called as a thread's owner, an editor, a viewer, an outsider, an
//! administrator's account and someone anonymous, on both engines, against a real server with
//! accounts: each answers what the table below says, and a refused request changes nothing.
//!
//! The table is the decision. A route the router serves but the table does not list fails
//! `every_route_has_a_decision` — adding a route means deciding here who may call it (and
//! naming it in the handler's `Authorized<…>`, which the server enforces, and in its
//! documented responses, which `every_route_has_a_decision` compares with the table). The MCP
//! methods and tools are walked in `access_mcp.rs`.

use crate::common;

use common::server::{RawAnswer as Answer, TestServer};
use reqwest::{Method, header};
use serde_json::{Value, json};

/// The administrator's token of the test server.
const ADMIN_TOKEN: &str = "admin-token-for-the-walk";

/// Who calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Who {
    Owner,
    Editor,
    Viewer,
    Outsider,
    Anonymous,
    /// An account made with the `admin` role (the administrator's token makes the fixtures).
    Admin,
}

/// Everyone, the administrator last: its walk removes an account and shares with others.
pub(super) const EVERYONE: [Who; 6] = [
    Who::Owner,
    Who::Editor,
    Who::Viewer,
    Who::Outsider,
    Who::Anonymous,
    Who::Admin,
];

impl Who {
    pub(super) fn name(self) -> &'static str {
        match self {
            Who::Admin => "admin",
            Who::Owner => "owner",
            Who::Editor => "editor",
            Who::Viewer => "viewer",
            Who::Outsider => "outsider",
            Who::Anonymous => "anonymous",
        }
    }
}

/// Who a route is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    /// Anyone.
    Open,
    /// Anyone who says who they are.
    Signed,
    /// Administrators only.
    Admin,
    /// The thread's viewers, editors and owner.
    Reader,
    /// Its editors and owner.
    Writer,
    /// Its owner.
    Owner,
    /// A study's viewers, editors and owner (and administrators); for anyone else the study
    /// does not exist. The walk's study is shared as its thread is: `editor` and `viewer`.
    StudyReader,
    /// A study's editors and owner; its viewer gets `403`, as a thread's viewer does.
    StudyEditor,
    /// A study's owner (and administrators); its members get `403`, as for a thread's owner
    /// routes.
    StudyOwner,
    /// A study participant (by its token); nobody else has a session there (404).
    Participant,
}

/// Every route: method, route template, who it is for.
const TABLE: &[(&str, &str, Need)] = &[
    ("GET", "/healthz", Need::Open),
    ("GET", "/", Need::Open),
    ("GET", "/t/{thread_id}", Need::Open),
    ("GET", "/assets/{*path}", Need::Open),
    // The studies pages are the page's shell too: what they show comes from `/api/studies…`,
    // which decides who sees what.
    ("GET", "/studies", Need::Open),
    ("GET", "/studies/{study_id}", Need::Open),
    // A participant's page: open to anyone with the link; this walk's link leads nowhere (404).
    ("GET", "/s/{entry_key}", Need::Open),
    ("GET", "/api/session", Need::Open),
    ("POST", "/api/session", Need::Open),
    ("DELETE", "/api/session", Need::Open),
    ("GET", "/metrics", Need::Admin),
    ("GET", "/api/users", Need::Admin),
    ("POST", "/api/users", Need::Admin),
    ("POST", "/api/users/{name}/token", Need::Admin),
    ("DELETE", "/api/users/{name}", Need::Admin),
    ("GET", "/api/openapi.json", Need::Signed),
    ("GET", "/api/info", Need::Signed),
    ("POST", "/api/markdown", Need::Signed),
    ("GET", "/api/tools", Need::Signed),
    ("GET", "/api/mcp-servers", Need::Signed),
    ("GET", "/api/me", Need::Signed),
    ("GET", "/api/threads", Need::Signed),
    ("POST", "/api/threads", Need::Signed),
    ("POST", "/api/threads/import", Need::Signed),
    ("GET", "/mcp", Need::Signed),
    ("GET", "/api/threads/{thread_id}", Need::Reader),
    ("PATCH", "/api/threads/{thread_id}", Need::Writer),
    ("GET", "/api/threads/{thread_id}/workspace", Need::Reader),
    ("GET", "/api/threads/{thread_id}/suggestions", Need::Reader),
    (
        "POST",
        "/api/threads/{thread_id}/suggestions/{suggestion_id}/accept",
        Need::Writer,
    ),
    (
        "POST",
        "/api/threads/{thread_id}/suggestions/{suggestion_id}/reject",
        Need::Writer,
    ),
    ("GET", "/api/threads/{thread_id}/objective", Need::Reader),
    ("PUT", "/api/threads/{thread_id}/objective", Need::Writer),
    ("GET", "/api/threads/{thread_id}/document", Need::Reader),
    ("PUT", "/api/threads/{thread_id}/document", Need::Writer),
    ("GET", "/api/threads/{thread_id}/todos", Need::Reader),
    ("POST", "/api/threads/{thread_id}/todos", Need::Writer),
    (
        "PATCH",
        "/api/threads/{thread_id}/todos/{todo_id}",
        Need::Writer,
    ),
    ("GET", "/api/threads/{thread_id}/preferences", Need::Reader),
    ("POST", "/api/threads/{thread_id}/preferences", Need::Writer),
    (
        "PATCH",
        "/api/threads/{thread_id}/preferences/{preference_id}",
        Need::Writer,
    ),
    ("GET", "/api/threads/{thread_id}/artifacts", Need::Reader),
    (
        "GET",
        "/api/threads/{thread_id}/artifacts/{artifact_id}",
        Need::Reader,
    ),
    (
        "GET",
        "/api/threads/{thread_id}/artifacts/{artifact_id}/chart.svg",
        Need::Reader,
    ),
    (
        "GET",
        "/api/threads/{thread_id}/artifacts/{artifact_id}/chart.png",
        Need::Reader,
    ),
    ("GET", "/api/threads/{thread_id}/messages", Need::Reader),
    ("GET", "/api/threads/{thread_id}/approvals", Need::Reader),
    // No call waits for approval: those let in get 404 for the unknown call.
    (
        "POST",
        "/api/threads/{thread_id}/approvals/{call_id}",
        Need::Writer,
    ),
    ("GET", "/api/threads/{thread_id}/events", Need::Reader),
    ("GET", "/api/threads/{thread_id}/history", Need::Reader),
    (
        "GET",
        "/api/threads/{thread_id}/document/diff",
        Need::Reader,
    ),
    ("GET", "/api/threads/{thread_id}/export", Need::Reader),
    ("POST", "/api/threads/{thread_id}/fork", Need::Reader),
    ("POST", "/api/threads/{thread_id}/restore", Need::Writer),
    // Before the chat: no turn runs, so cancel answers 409 to those let in.
    ("POST", "/api/threads/{thread_id}/cancel", Need::Writer),
    ("POST", "/api/threads/{thread_id}/chat", Need::Writer),
    // After the chat: turn 1 changed nothing, so there is nothing to undo (409).
    (
        "POST",
        "/api/threads/{thread_id}/turns/{turn_index}/revert",
        Need::Writer,
    ),
    (
        "POST",
        "/api/threads/{thread_id}/tools/{tool_name}",
        Need::Writer,
    ),
    ("POST", "/mcp/{thread_id}", Need::Reader),
    ("GET", "/mcp/{thread_id}", Need::Reader),
    ("DELETE", "/mcp/{thread_id}", Need::Reader),
    ("GET", "/api/threads/{thread_id}/members", Need::Owner),
    (
        "PUT",
        "/api/threads/{thread_id}/members/{name}",
        Need::Owner,
    ),
    (
        "DELETE",
        "/api/threads/{thread_id}/members/{name}",
        Need::Owner,
    ),
    ("POST", "/api/studies", Need::Signed),
    ("GET", "/api/studies", Need::Signed),
    ("GET", "/api/studies/{study_id}", Need::StudyReader),
    ("PATCH", "/api/studies/{study_id}", Need::StudyEditor),
    ("POST", "/api/studies/{study_id}/open", Need::StudyEditor),
    ("POST", "/api/studies/{study_id}/preview", Need::StudyEditor),
    ("POST", "/api/studies/{study_id}/close", Need::StudyEditor),
    ("GET", "/api/studies/{study_id}/members", Need::StudyOwner),
    // `someone` is added, made an editor, then removed again.
    ("POST", "/api/studies/{study_id}/members", Need::StudyOwner),
    (
        "PATCH",
        "/api/studies/{study_id}/members/{name}",
        Need::StudyOwner,
    ),
    (
        "DELETE",
        "/api/studies/{study_id}/members/{name}",
        Need::StudyOwner,
    ),
    // Anyone may enter a study by its link; this one leads nowhere (404).
    ("POST", "/api/s/{entry_key}/sessions", Need::Open),
    ("GET", "/api/participant", Need::Participant),
    ("POST", "/api/participant/consent", Need::Participant),
    ("POST", "/api/participant/start", Need::Participant),
    ("POST", "/api/participant/finish", Need::Participant),
    ("POST", "/api/participant/withdraw", Need::Participant),
    ("GET", "/api/studies/{study_id}/sessions", Need::StudyReader),
    ("GET", "/api/studies/{study_id}/summary", Need::StudyReader),
    // Pseudonymised (the default): every member reads it; the raw one is the owner's
    // (`studies/members.rs`, `studies/data.rs`).
    ("GET", "/api/studies/{study_id}/export", Need::StudyReader),
    (
        "GET",
        "/api/studies/{study_id}/sessions.csv",
        Need::StudyReader,
    ),
    // No such session: those let in get 404.
    (
        "GET",
        "/api/studies/{study_id}/sessions/{session_ref}/timeline",
        Need::StudyReader,
    ),
    ("DELETE", "/api/studies/{study_id}", Need::StudyOwner),
    // Deletes last, the thread's own very last.
    (
        "DELETE",
        "/api/threads/{thread_id}/todos/{todo_id}",
        Need::Writer,
    ),
    (
        "DELETE",
        "/api/threads/{thread_id}/preferences/{preference_id}",
        Need::Writer,
    ),
    ("DELETE", "/api/threads/{thread_id}", Need::Owner),
];

/// What `who` gets from a route for `need`: `None` when let in.
fn refusal(need: Need, who: Who) -> Option<u16> {
    match (need, who) {
        (Need::Open, _) => None,
        // Nobody in this walk is a participant.
        (Need::Participant, _) => Some(404),
        (_, Who::Anonymous) => Some(401),
        (_, Who::Admin) => None,
        (Need::Signed, _) => None,
        (Need::Admin, _) => Some(403),
        (_, Who::Outsider) => Some(404),
        (Need::Reader, _) => None,
        (Need::Writer, Who::Viewer) => Some(403),
        (Need::Writer, _) => None,
        (Need::Owner, Who::Owner) => None,
        (Need::Owner, _) => Some(403),
        (Need::StudyReader, _) => None,
        (Need::StudyEditor, Who::Viewer) => Some(403),
        (Need::StudyEditor, _) => None,
        (Need::StudyOwner, Who::Owner) => None,
        (Need::StudyOwner, _) => Some(403),
    }
}

/// The thread, its items and the people of one walk.
pub(super) struct Fixture {
    pub(super) thread: String,
    study: String,
    pref: i64,
    todo: i64,
    artifact: i64,
}

/// The accounts, with their personal tokens.
pub(super) struct People {
    tokens: std::collections::HashMap<&'static str, String>,
}

impl People {
    pub(super) fn token(&self, who: Who) -> Option<&str> {
        self.tokens.get(who.name()).map(String::as_str)
    }
}

pub(super) async fn send(
    server: &TestServer,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> Answer {
    let mut request = server.client.request(method.clone(), server.url(path));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if path.starts_with("/mcp/") {
        request = request.header(header::ACCEPT, "application/json, text/event-stream");
    }
    if let Some(body) = body {
        request = request.json(body);
    }
    let response = request.send().await.expect("request sent");
    let streaming = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
        && !path.ends_with("/chat");
    if streaming {
        Answer::head(&response)
    } else {
        Answer::read(response).await
    }
}

/// What the server tells a page the caller `may` do with the thread and the study (so the page
/// offers it) is exactly what the table lets them do: one rule, never restated by the page.
async fn assert_may_is_the_table(server: &TestServer, fx: &Fixture, who: Who, token: Option<&str>) {
    let lets = |method: &str, route: &str| {
        let (_, _, need) = TABLE
            .iter()
            .find(|(m, r, _)| *m == method && *r == route)
            .unwrap_or_else(|| panic!("{method} {route} is in the table"));
        refusal(*need, who).is_none()
    };
    if refusal(Need::Reader, who).is_none() {
        let expected = json!({
            "chat": lets("POST", "/api/threads/{thread_id}/chat"),
            "edit": lets("PUT", "/api/threads/{thread_id}/objective"),
            "share": lets("PUT", "/api/threads/{thread_id}/members/{name}"),
            "delete": lets("DELETE", "/api/threads/{thread_id}"),
        });
        let thread = send(
            server,
            Method::GET,
            &format!("/api/threads/{}", fx.thread),
            token,
            None,
        )
        .await
        .json();
        assert_eq!(thread["may"], expected, "the thread as {}", who.name());
        let listed = send(server, Method::GET, "/api/threads", token, None)
            .await
            .json();
        let entry = listed
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == json!(fx.thread))
            .unwrap();
        assert_eq!(
            entry["may"],
            expected,
            "the thread listed for {}",
            who.name()
        );
    }
    if refusal(Need::StudyReader, who).is_none() {
        let expected = json!({
            "change": lets("PATCH", "/api/studies/{study_id}"),
            "share": lets("POST", "/api/studies/{study_id}/members"),
            "delete": lets("DELETE", "/api/studies/{study_id}"),
        });
        let study = send(
            server,
            Method::GET,
            &format!("/api/studies/{}", fx.study),
            token,
            None,
        )
        .await
        .json();
        assert_eq!(study["may"], expected, "the study as {}", who.name());
    }
}

pub(super) async fn admin(
    server: &TestServer,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> Answer {
    send(server, method, path, Some(ADMIN_TOKEN), body.as_ref()).await
}

/// Makes the accounts: the five people of the walk, `someone` (shared with and unshared by
/// the owners' walks) and `spare` (whose token the administrator's walk resets, then removes).
pub(super) async fn make_people(server: &TestServer) -> People {
    let mut tokens = std::collections::HashMap::new();
    for name in [
        "owner", "editor", "viewer", "outsider", "admin", "someone", "spare",
    ] {
        let role = if name == "admin" { "admin" } else { "member" };
        let made = admin(
            server,
            Method::POST,
            "/api/users",
            Some(json!({"name": name, "password": format!("{name}-password"), "role": role})),
        )
        .await;
        assert_eq!(made.status, 201, "{:?}", made.json());
        let token = made.json()["token"].as_str().unwrap().to_string();
        assert!(token.starts_with("haico_"));
        tokens.insert(name, token);
    }
    People { tokens }
}

/// A thread owned by `owner`, shared with `editor` and `viewer`, with a locked preference, a
/// step and a chart.
pub(super) async fn make_thread(server: &TestServer, people: &People, id: &str) -> Fixture {
    let owner = people.token(Who::Owner);
    let made = send(
        server,
        Method::POST,
        "/api/threads",
        owner,
        Some(&json!({"id": id})),
    )
    .await;
    assert_eq!(made.status, 201, "{:?}", made.json());
    assert_eq!(made.json()["owner"], json!("owner"));
    for (name, role) in [("editor", "editor"), ("viewer", "viewer")] {
        let shared = send(
            server,
            Method::PUT,
            &format!("/api/threads/{id}/members/{name}"),
            owner,
            Some(&json!({"role": role})),
        )
        .await;
        assert_eq!(shared.status, 200, "{:?}", shared.json());
    }
    let pref = send(
        server,
        Method::POST,
        &format!("/api/threads/{id}/preferences"),
        owner,
        Some(&json!({"title": "Keep it short", "locked": true})),
    )
    .await;
    assert_eq!(pref.status, 201);
    let todo = send(
        server,
        Method::POST,
        &format!("/api/threads/{id}/todos"),
        owner,
        Some(&json!({"text": "First step"})),
    )
    .await;
    assert_eq!(todo.status, 201);
    let chart = send(
        server,
        Method::POST,
        &format!("/api/threads/{id}/tools/chart_generator"),
        owner,
        Some(&json!({
            "action_and_reasoning": "Draw it.",
            "chart_type": "bar",
            "title": "Sales",
            "data": {"labels": ["a", "b"], "series": [{"name": "s", "values": [1, 2]}]},
        })),
    )
    .await;
    assert_eq!(chart.status, 200);
    let study = send(
        server,
        Method::POST,
        "/api/studies",
        owner,
        Some(&study_design()),
    )
    .await;
    assert_eq!(study.status, 201, "{:?}", study.json());
    let study_id = study.json()["id"].as_str().unwrap().to_string();
    for (name, role) in [("editor", "editor"), ("viewer", "viewer")] {
        let added = send(
            server,
            Method::POST,
            &format!("/api/studies/{study_id}/members"),
            owner,
            Some(&json!({"name": name, "role": role})),
        )
        .await;
        assert_eq!(added.status, 201, "{:?}", added.json());
    }
    Fixture {
        study: study_id,
        thread: id.to_string(),
        pref: pref.json()["id"].as_i64().unwrap(),
        todo: todo.json()["id"].as_i64().unwrap(),
        artifact: chart.json()["artifact_id"].as_i64().unwrap(),
    }
}

/// A minimal valid study design.
fn study_design() -> Value {
    json!({
        "title": "Walk study",
        "task": {"title": "Task", "instructions": "Do it."},
        "consent": {"text": "We record what you do."},
        "completion": {"completed": {"code": "C1"}},
        "conditions": [{"key": "chat", "label": "Chat", "panels": [], "tools": []}],
    })
}

/// The concrete request for a route template.
fn concrete(route: &str, method: &str, fx: &Fixture, who: Who) -> (String, Option<Value>) {
    let t = &fx.thread;
    let path = route
        .replace("{thread_id}", t)
        .replace("{todo_id}", &fx.todo.to_string())
        .replace("{preference_id}", &fx.pref.to_string())
        .replace("{artifact_id}", &fx.artifact.to_string())
        .replace("{turn_index}", "1")
        .replace("{suggestion_id}", "1")
        .replace("{call_id}", "1-1")
        .replace("{tool_name}", "set_objective")
        .replace("{*path}", "app.css")
        .replace("{study_id}", &fx.study)
        .replace("{session_ref}", "nosuchss")
        .replace("{entry_key}", "no-such-entry-key-anywhere")
        .replace("/api/users/{name}", "/api/users/spare")
        .replace("{name}", "someone");
    let body = match (method, route) {
        ("POST", "/api/session") => Some(json!({"name": "someone"})),
        ("POST", "/api/users") => Some(json!({"name": format!("new-{}", who.name())})),
        ("POST", "/api/markdown") => Some(json!({"markdown": "*hi*"})),
        ("POST", "/api/threads") => Some(json!({"id": format!("x-{}", who.name())})),
        ("POST", "/api/threads/import") => Some(json!({})),
        ("PATCH", "/api/threads/{thread_id}") => Some(json!({"title": "Renamed"})),
        ("PUT", "/api/threads/{thread_id}/objective") => Some(json!({"objective": "Changed"})),
        ("PUT", "/api/threads/{thread_id}/document") => Some(json!({"content": "Changed"})),
        ("POST", "/api/threads/{thread_id}/todos") => Some(json!({"text": "Another"})),
        ("PATCH", "/api/threads/{thread_id}/todos/{todo_id}") => Some(json!({"done": true})),
        ("POST", "/api/threads/{thread_id}/preferences") => Some(json!({"title": "More"})),
        ("PATCH", "/api/threads/{thread_id}/preferences/{preference_id}") => {
            Some(json!({"locked": false}))
        }
        ("POST", "/api/threads/{thread_id}/fork") => {
            Some(json!({"id": format!("f-{}", who.name())}))
        }
        ("POST", "/api/threads/{thread_id}/restore") => {
            Some(json!({"rev": 0, "panels": ["objective"]}))
        }
        ("POST", "/api/threads/{thread_id}/chat") => Some(json!({"message": "hello"})),
        ("POST", "/api/threads/{thread_id}/approvals/{call_id}") => Some(json!({"approve": true})),
        ("POST", "/api/threads/{thread_id}/tools/{tool_name}") => Some(json!({
            "action_and_reasoning": "Set it.",
            "objective": "From the tools endpoint",
        })),
        ("POST", "/mcp/{thread_id}") => Some(json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "walk", "version": "0"}},
        })),
        ("PUT", "/api/threads/{thread_id}/members/{name}") => Some(json!({"role": "viewer"})),
        ("POST", "/api/studies") => Some(study_design()),
        ("PATCH", "/api/studies/{study_id}") => Some(json!({"title": "Renamed study"})),
        ("POST", "/api/studies/{study_id}/preview") => Some(json!({"condition": "chat"})),
        ("POST", "/api/studies/{study_id}/members") => {
            Some(json!({"name": "someone", "role": "viewer"}))
        }
        ("PATCH", "/api/studies/{study_id}/members/{name}") => Some(json!({"role": "editor"})),
        ("POST", "/api/s/{entry_key}/sessions") => Some(json!({"participant_id": "walker"})),
        ("POST", "/api/participant/consent") => Some(json!({"agree": true})),
        _ => None,
    };
    let path = match route {
        "/api/threads/{thread_id}/document/diff" => format!("{path}?from=0"),
        _ => path,
    };
    (path, body)
}

/// What a request that is let in answers.
fn success(method: &str, route: &str) -> u16 {
    match (method, route) {
        ("POST", "/api/session") => 422,
        ("POST", "/api/threads/import") => 415,
        ("GET", "/mcp") => 404,
        // No MCP session is open: the library answers this itself (a 4xx of its own).
        ("GET" | "DELETE", "/mcp/{thread_id}") => 0,
        ("POST", "/api/threads/{thread_id}/cancel") => 409,
        // The fixture has no suggestion #1: let in, the answer is "no such suggestion".
        (
            "POST",
            "/api/threads/{thread_id}/suggestions/{suggestion_id}/accept"
            | "/api/threads/{thread_id}/suggestions/{suggestion_id}/reject",
        ) => 404,
        ("POST", "/api/threads/{thread_id}/turns/{turn_index}/revert") => 409,
        ("POST", "/api/threads/{thread_id}/approvals/{call_id}") => 404,
        ("POST", "/api/s/{entry_key}/sessions") => 404,
        ("GET", "/s/{entry_key}") => 404,
        ("GET", "/api/studies/{study_id}/sessions/{session_ref}/timeline") => 404,
        (
            "POST",
            "/api/studies" | "/api/studies/{study_id}/preview" | "/api/studies/{study_id}/members",
        ) => 201,
        ("POST", "/api/users" | "/api/threads" | "/api/threads/{thread_id}/fork")
        | ("POST", "/api/threads/{thread_id}/todos" | "/api/threads/{thread_id}/preferences") => {
            201
        }
        (
            "DELETE",
            "/api/threads/{thread_id}/members/{name}" | "/api/studies/{study_id}/members/{name}",
        ) => 200,
        ("DELETE", _) => 204,
        _ => 200,
    }
}

/// What the thread looks like, read as the administrator.
async fn state_of(server: &TestServer, thread: &str) -> (Value, Value, Value) {
    let workspace = admin(
        server,
        Method::GET,
        &format!("/api/threads/{thread}/workspace"),
        None,
    )
    .await;
    let history = admin(
        server,
        Method::GET,
        &format!("/api/threads/{thread}/history"),
        None,
    )
    .await;
    let members = admin(
        server,
        Method::GET,
        &format!("/api/threads/{thread}/members"),
        None,
    )
    .await;
    (workspace.json(), history.json(), members.json())
}

backend_tests! {
    async fn every_route_answers_each_person_as_the_table_says(engine) {
        let tdb = common::TestDb::new(engine).await;
        let server = TestServer::with_token(&tdb.db, ADMIN_TOKEN).await;
        let people = make_people(&server).await;
        for who in EVERYONE {
            let fx = make_thread(&server, &people, &format!("t-{}", who.name())).await;
            let before = state_of(&server, &fx.thread).await;
            let token = people.token(who);
            assert_may_is_the_table(&server, &fx, who, token).await;
            let mut let_in_writes = false;
            for (method, route, need) in TABLE {
                let (path, body) = concrete(route, method, &fx, who);
                let method_ = Method::from_bytes(method.as_bytes()).unwrap();
                let answer = send(&server, method_, &path, token, body.as_ref()).await;
                let what = format!("{method} {path} as {}", who.name());
                match refusal(*need, who) {
                    Some(status) => {
                        assert_eq!(
                            answer.status.as_u16(),
                            status,
                            "{what}: {:?}",
                            String::from_utf8_lossy(&answer.body)
                        );
                        let body = answer.json();
                        assert!(body["error"].as_str().is_some_and(|e| !e.is_empty()), "{what}: {body}");
                        if status == 401 {
                            assert!(answer.header(header::WWW_AUTHENTICATE).is_some(), "{what}");
                        }
                        if status == 404 && route.contains("{thread_id}") {
                            assert_eq!(
                                body["error"],
                                json!(format!("thread `{}` does not exist", fx.thread)),
                                "{what}: a thread one may not see reads as one that does not exist"
                            );
                        }
                    }
                    None => {
                        let expected = success(method, route);
                        if expected == 0 {
                            assert!(
                                ![401, 403, 404].contains(&answer.status.as_u16())
                                    && !answer.status.is_server_error(),
                                "{what}: {}",
                                answer.status
                            );
                        } else {
                            assert_eq!(
                                answer.status.as_u16(),
                                expected,
                                "{what}: {:?}",
                                String::from_utf8_lossy(&answer.body)
                            );
                        }
                        if !matches!(*method, "GET") && matches!(need, Need::Writer | Need::Owner) {
                            let_in_writes = true;
                        }
                    }
                }
            }
            if !let_in_writes {
                // Everything this person tried on the thread was refused or only read: the
                // thread is exactly as it was.
                assert_eq!(state_of(&server, &fx.thread).await, before, "as {}", who.name());
            }
        }
        // Nobody but the signed-in made threads.
        let threads = admin(&server, Method::GET, "/api/threads", None).await.json();
        let ids: Vec<&str> = threads.as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
        assert!(!ids.contains(&"x-anonymous") && !ids.contains(&"f-outsider") && !ids.contains(&"f-anonymous"), "{ids:?}");
        assert!(ids.contains(&"x-outsider") && ids.contains(&"f-viewer"), "{ids:?}");
        server.shutdown().await;
        tdb.cleanup().await;
    }
}

/// Every route the server has, as `(method, template)`: the API's documented operations and
/// the routes outside the document (the web UI's shell, MCP).
fn served_routes() -> Vec<(String, String)> {
    let doc = haico::http::openapi_document();
    let mut routes = Vec::new();
    for (path, item) in &doc.paths.paths {
        let ops = [
            ("GET", item.get.is_some()),
            ("PUT", item.put.is_some()),
            ("POST", item.post.is_some()),
            ("DELETE", item.delete.is_some()),
            ("PATCH", item.patch.is_some()),
        ];
        for (method, present) in ops {
            if present {
                routes.push((method.to_string(), path.clone()));
            }
        }
    }
    for route in haico::http::ui::ROUTES {
        routes.push(("GET".to_string(), route.to_string()));
    }
    routes.push(("GET".to_string(), "/mcp".to_string()));
    routes
}

/// Every route the server serves has a row in the table, and the table only routes it serves;
/// and the OpenAPI document, which every handler's marker (`responses(Edit, …)` next to its
/// `Authorized<Edit>`) fills, documents the refusals the row decides: `401` for every route
/// but the open ones, `403` for those that need more than reading (or an administrator).
#[test]
fn every_route_has_a_decision() {
    let routes = served_routes();
    for (method, route) in &routes {
        assert!(
            TABLE.iter().any(|(m, r, _)| m == method && r == route),
            "{method} {route} has no row in this test's TABLE: decide who may call it (owner, \
             editor, viewer, outsider, administrator, anonymous), add the row, and name it in \
             the handler's `Authorized<…>` and documented responses"
        );
    }
    for (method, route, _) in TABLE {
        assert!(
            routes.iter().any(|(m, r)| m == method && r == route),
            "{method} {route} is in the table but the server does not serve it"
        );
    }
    let doc = serde_json::to_value(haico::http::openapi_document()).unwrap();
    for (method, route, need) in TABLE {
        let Some(responses) = doc["paths"][route][method.to_lowercase()]["responses"].as_object()
        else {
            continue; // The web UI's shell and `/mcp` are not in the document.
        };
        assert_eq!(
            responses.contains_key("401"),
            !matches!(need, Need::Open | Need::Participant)
                || *route == "/api/session" && *method == "POST",
            "{method} {route}: a documented 401 for {need:?}"
        );
        assert_eq!(
            responses.contains_key("403"),
            matches!(
                need,
                Need::Admin | Need::Writer | Need::Owner | Need::StudyEditor | Need::StudyOwner
            )
                || *route == "/api/session" && *method == "POST"
                // The raw export is its owner's alone, even among those who see the study.
                || *route == "/api/studies/{study_id}/export",
            "{method} {route}: a documented 403 for {need:?}"
        );
    }
}

backend_tests! {
    // A method a route does not serve, and a path no route serves, are refused before anything
    // else to someone anonymous (`401`), and answered `405` (with `Allow`) or `404` to those who
    // say who they are: no handler is reached under a guessed rule.
    async fn a_method_a_route_does_not_serve_is_not_served(engine) {
        let tdb = common::TestDb::new(engine).await;
        let server = TestServer::with_token(&tdb.db, ADMIN_TOKEN).await;
        let people = make_people(&server).await;
        let fx = make_thread(&server, &people, "unserved").await;
        for (method, path) in [
            (Method::PATCH, "/healthz".to_string()),
            (Method::DELETE, format!("/api/threads/{}/objective", fx.thread)),
            (Method::PUT, format!("/api/threads/{}/chat", fx.thread)),
        ] {
            let anonymous = send(&server, method.clone(), &path, None, None).await;
            assert_eq!(anonymous.status, 401, "{method} {path}");
            for who in [Who::Outsider, Who::Viewer, Who::Owner] {
                let answer = send(&server, method.clone(), &path, people.token(who), None).await;
                assert_eq!(answer.status, 405, "{method} {path} as {}", who.name());
                assert!(answer.json()["error"].is_string(), "{method} {path}");
                assert!(answer.header(header::ALLOW).is_some(), "{method} {path}");
            }
        }
        let anonymous = send(&server, Method::GET, "/api/no-such-route", None, None).await;
        assert_eq!(anonymous.status, 401);
        let signed = send(&server, Method::GET, "/api/no-such-route", people.token(Who::Viewer), None).await;
        assert_eq!(signed.status, 404);
        server.shutdown().await;
        tdb.cleanup().await;
    }
}
