//! Every MCP method and every tool, over MCP and over REST's tools endpoint, called as a
//! thread's owner, an editor, a viewer, an outsider, an administrator's account and someone
//! anonymous, on both engines: both adapters give the same answer, from the one rule
//! (`haico::people::may`). A viewer reads everything, the read-only tools included, and calls
//! no tool that writes; an editor calls them all. And the other streams end, like REST's
//! events stream (`accounts.rs`), once their caller loses access: an MCP notification stream,
//! and a chat turn's answer.

use std::time::Duration;

use reqwest::{Method, header};
use serde_json::{Value, json};

use super::access::{EVERYONE, Who, admin, make_people, make_thread, send};
use crate::common::{
    self,
    agent::Setup,
    mock_llm::{MockLlm, Script},
    server::TestServer,
    sse::SseReader,
};

/// The administrator's token of the test server.
const ADMIN_TOKEN: &str = "admin-token-for-the-walk";

/// What a viewer is told when it asks for a tool that writes, on either adapter.
const READ_ONLY: &str =
    "you may read this thread but not change it: ask its owner to share it with you as an editor";

/// Every MCP method a client may send on a session, with its parameters (`{thread}` stands for
/// the thread); each needs only reading (tool calls are walked tool by tool below).
const METHODS: &[(&str, &str)] = &[
    ("ping", "{}"),
    ("tools/list", "{}"),
    ("resources/list", "{}"),
    ("resources/templates/list", "{}"),
    (
        "resources/read",
        r#"{"uri": "haico://thread/{thread}/objective"}"#,
    ),
    (
        "resources/subscribe",
        r#"{"uri": "haico://thread/{thread}/plan"}"#,
    ),
    (
        "resources/unsubscribe",
        r#"{"uri": "haico://thread/{thread}/plan"}"#,
    ),
];

/// One MCP session on a thread, as one caller.
struct Session<'a> {
    server: &'a TestServer,
    thread: String,
    token: Option<String>,
    id: String,
    next: u64,
}

impl<'a> Session<'a> {
    /// Opens a session: the HTTP status of `initialize` when it is refused.
    async fn open(
        server: &'a TestServer,
        thread: &str,
        token: Option<&str>,
    ) -> Result<Session<'a>, u16> {
        let mut session = Session {
            server,
            thread: thread.to_string(),
            token: token.map(str::to_string),
            id: String::new(),
            next: 1,
        };
        let init = session
            .post(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "walk", "version": "0"}}}))
            .await;
        if init.status() != 200 {
            return Err(init.status().as_u16());
        }
        session.id = init.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_string();
        let _ = init.text().await;
        let ack = session
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert!(ack.status().is_success(), "{}", ack.status());
        Ok(session)
    }

    fn request(&self, method: Method) -> reqwest::RequestBuilder {
        let url = self.server.url(&format!("/mcp/{}", self.thread));
        let mut request = self
            .server
            .client
            .request(method, url)
            .header(header::ACCEPT, "application/json, text/event-stream");
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if !self.id.is_empty() {
            request = request
                .header("mcp-session-id", &self.id)
                .header("mcp-protocol-version", "2025-06-18");
        }
        request
    }

    async fn post(&self, message: Value) -> reqwest::Response {
        self.request(Method::POST)
            .json(&message)
            .send()
            .await
            .unwrap()
    }

    /// Calls `method` and returns the JSON-RPC answer.
    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let answer = self
            .post(json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params}))
            .await;
        assert_eq!(answer.status(), 200, "{method}");
        let text = answer.text().await.unwrap();
        text.lines()
            .find_map(|l| {
                l.strip_prefix("data:")
                    .map(str::trim)
                    .filter(|d| d.starts_with('{'))
            })
            .map_or_else(
                || serde_json::from_str::<Value>(&text).unwrap(),
                |d| serde_json::from_str::<Value>(d).unwrap(),
            )
    }
}

/// Whether `who` may call a tool that writes (`writes`) or only reads.
fn may_call(who: Who, writes: bool) -> bool {
    match who {
        Who::Owner | Who::Editor | Who::Admin => true,
        Who::Viewer => !writes,
        Who::Outsider | Who::Anonymous => false,
    }
}

backend_tests! {
    async fn every_mcp_method_and_tool_answers_each_person_as_rest_does(engine) {
        let tdb = common::TestDb::new(engine).await;
        let server = TestServer::with_token(&tdb.db, ADMIN_TOKEN).await;
        let people = make_people(&server).await;
        let fx = make_thread(&server, &people, "mcp-walk").await;
        let thread = fx.thread.clone();
        let tools = haico::tools::build_tools(&haico::ThreadId::parse(&thread).unwrap());
        for who in EVERYONE {
            let token = people.token(who);
            let mut session = match Session::open(&server, &thread, token).await {
                Ok(session) => session,
                Err(status) => {
                    let expected = match who {
                        Who::Anonymous => 401,
                        Who::Outsider => 404,
                        _ => panic!("{} could not open an MCP session: {status}", who.name()),
                    };
                    assert_eq!(status, expected, "initialize as {}", who.name());
                    // The same caller is refused by REST's tools endpoint in the same way.
                    let path = format!("/api/threads/{thread}/tools/list_todos");
                    let body = json!({"action_and_reasoning": "Look."});
                    let rest = send(&server, Method::POST, &path, token, Some(&body)).await;
                    assert_eq!(rest.status.as_u16(), expected, "{path} as {}", who.name());
                    continue;
                }
            };
            for (method, params) in METHODS {
                let params: Value = serde_json::from_str(&params.replace("{thread}", &thread)).unwrap();
                let answer = session.call(method, params).await;
                assert!(answer["result"].is_object(), "{method} as {}: {answer}", who.name());
            }
            for tool in tools.iter() {
                let writes = !tool.read_only();
                // Arguments no tool accepts whole: a let-in call fails in its envelope and
                // changes nothing; a refused one never reaches the tool.
                let args = json!({"action_and_reasoning": "Walk.", "bogus": true});
                let what = format!("{} as {}", tool.name(), who.name());
                let mcp = session
                    .call("tools/call", json!({"name": tool.name(), "arguments": args}))
                    .await;
                let path = format!("/api/threads/{thread}/tools/{}", tool.name());
                let rest = send(&server, Method::POST, &path, token, Some(&args)).await;
                if may_call(who, writes) {
                    assert!(mcp["result"].is_object(), "MCP {what}: {mcp}");
                    assert_eq!(rest.status, 200, "REST {what}: {:?}", rest.json());
                } else {
                    assert_eq!(mcp["error"]["message"], json!(READ_ONLY), "MCP {what}: {mcp}");
                    assert_eq!(rest.status, 403, "REST {what}");
                    assert_eq!(rest.json(), json!({"error": READ_ONLY}), "REST {what}");
                }
            }
        }
        server.shutdown().await;
        tdb.cleanup().await;
    }

    // An MCP session's notification stream ends once its caller may no longer read the
    // thread, as REST's events stream does; the session is gone with it.
    async fn an_mcp_notification_stream_ends_when_access_is_lost(engine) {
        let tdb = common::TestDb::new(engine).await;
        let server = TestServer::with_token(&tdb.db, ADMIN_TOKEN).await;
        let people = make_people(&server).await;
        let fx = make_thread(&server, &people, "mcp-unshare").await;
        let mut session = Session::open(&server, &fx.thread, people.token(Who::Viewer)).await.unwrap();
        let subscribed = session
            .call("resources/subscribe", json!({"uri": format!("haico://thread/{}/plan", fx.thread)}))
            .await;
        assert!(subscribed["result"].is_object(), "{subscribed}");
        let mut stream = session.request(Method::GET).send().await.unwrap();
        assert_eq!(stream.status(), 200);
        let unshared = admin(
            &server,
            Method::DELETE,
            &format!("/api/threads/{}/members/viewer", fx.thread),
            None,
        )
        .await;
        assert_eq!(unshared.status, 200);
        let ended = tokio::time::timeout(Duration::from_secs(12), async {
            while let Some(chunk) = stream.chunk().await.unwrap_or(None) {
                let _ = chunk;
            }
        })
        .await;
        assert!(ended.is_ok(), "the notification stream ended once the viewer lost access");
        // The next request on the session is refused like any for a thread one may not see.
        let after = session.post(json!({"jsonrpc": "2.0", "id": 99, "method": "ping"})).await;
        assert_eq!(after.status(), 404);
        server.shutdown().await;
        tdb.cleanup().await;
    }

    // A chat turn's answer streams to an editor until the turn is done, or until the editor
    // may no longer read the thread: then it ends (the turn itself runs on, started by someone
    // who could, and is cancelled here).
    async fn a_chat_answer_ends_when_access_is_lost(engine) {
        let setup = Setup::new(
            engine,
            MockLlm::openai(vec![Script::hang()]).await,
            haico::agent::AgentConfig::default(),
            None,
        )
        .await;
        let server = &setup.server;
        // The first account, made in one-person mode, administers the server.
        let boss = server.post("/api/users", &json!({"name": "boss", "role": "admin"})).await.expect(201);
        let boss = boss["token"].as_str().unwrap().to_string();
        // A server without accounts looks again at most once a second: from then on, every
        // request says who it is.
        tokio::time::sleep(Duration::from_millis(1_100)).await;
        let ed = send(server, Method::POST, "/api/users", Some(&boss), Some(&json!({"name": "ed"}))).await;
        assert_eq!(ed.status, 201);
        let ed = ed.json()["token"].as_str().unwrap().to_string();
        let made = send(server, Method::POST, "/api/threads", Some(&boss), Some(&json!({"id": "chat-lost"}))).await;
        assert_eq!(made.status, 201);
        let shared = send(server, Method::PUT, "/api/threads/chat-lost/members/ed", Some(&boss),
            Some(&json!({"role": "editor"}))).await;
        assert_eq!(shared.status, 200);
        let answer = server.client.post(server.url("/api/threads/chat-lost/chat"))
            .bearer_auth(&ed)
            .json(&json!({"message": "Take your time."}))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
        let mut answer = SseReader::from_response(answer);
        assert_eq!(answer.next(Duration::from_secs(15)).await.event, "turn");
        let unshared = send(server, Method::DELETE, "/api/threads/chat-lost/members/ed", Some(&boss), None).await;
        assert_eq!(unshared.status, 200);
        answer.expect_end(Duration::from_secs(12)).await;
        let cancelled = send(server, Method::POST, "/api/threads/chat-lost/cancel", Some(&boss), None).await;
        assert_eq!(cancelled.status, 202);
        setup.cleanup().await;
    }
}
