//! MCP sessions across replicas: two servers (two `AppState`s, as two `haico serve` processes
//! behind a load balancer) on one database, and raw JSON-RPC requests that choose the server
//! and the `Mcp-Session-Id`, on SQLite and PostgreSQL. Also the session store on its own.

use crate::common;

use std::time::Duration;

use chrono::Utc;
use common::{TestDb, create_thread, server::TestServer};
use futures::StreamExt;
use haico::{
    ThreadId,
    events::{DEFAULT_POLL_INTERVAL, PollingBus},
    http::AppState,
    mcp::sessions::{McpSessions, Standing},
    store::Database,
};
use rmcp::transport::streamable_http_server::session::{SessionState, SessionStore};
use serde_json::{Value, json};

const VERSION: &str = "2025-06-18";

/// A server that follows other processes' events too, as `haico serve` does.
async fn replica(db: &Database) -> TestServer {
    let bus = PollingBus::new(db.clone());
    let _poller = bus.spawn_poller(DEFAULT_POLL_INTERVAL);
    let state = AppState::with_bus(
        db.clone(),
        std::sync::Arc::new(haico::agent::providers::UnconfiguredModel::new("none")),
        haico::agent::AgentConfig::default(),
        bus,
    );
    TestServer::with_state(state).await
}

/// An answer to a raw MCP request.
struct Answer {
    status: u16,
    session: Option<String>,
    body: String,
}

impl Answer {
    /// The JSON-RPC message with `id` among the SSE frames (or the JSON body).
    fn message(&self, id: i64) -> Value {
        let found = self
            .body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .chain([self.body.as_str()])
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|message| message["id"] == json!(id));
        found.unwrap_or_else(|| {
            panic!(
                "no answer to request {id} in {}: {}",
                self.status, self.body
            )
        })
    }

    /// The `result` of the message with `id`; panics on a JSON-RPC error.
    fn result(&self, id: i64) -> Value {
        assert_eq!(self.status, 200, "{}", self.body);
        let message = self.message(id);
        assert!(
            message.get("error").is_none(),
            "request {id} failed: {message}"
        );
        message["result"].clone()
    }
}

/// Sends `method` of `verb` to `/mcp/{thread}` on `server`, in `session` if given.
async fn send(
    server: &TestServer,
    verb: reqwest::Method,
    thread: &str,
    session: Option<&str>,
    message: Option<Value>,
) -> Answer {
    let mut request = server
        .client
        .request(verb, server.url(&format!("/mcp/{thread}")))
        .header("accept", "application/json, text/event-stream");
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", VERSION);
    }
    if let Some(message) = message {
        request = request.json(&message);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    let body = tokio::time::timeout(Duration::from_secs(15), response.text())
        .await
        .expect("the answer ends in time")
        .unwrap();
    Answer {
        status,
        session,
        body,
    }
}

/// A JSON-RPC request in `session` on `server`.
async fn rpc(
    server: &TestServer,
    thread: &str,
    session: &str,
    id: i64,
    method: &str,
    params: Value,
) -> Answer {
    let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    send(
        server,
        reqwest::Method::POST,
        thread,
        Some(session),
        Some(message),
    )
    .await
}

/// Opens a session on `server` for `thread` (handshake and `initialized`); returns its id.
async fn open_session(server: &TestServer, thread: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {},
        "clientInfo": {"name": "replica-test", "version": "0"}}});
    let answer = send(server, reqwest::Method::POST, thread, None, Some(init)).await;
    let result = answer.result(0);
    assert_eq!(result["protocolVersion"], VERSION);
    let session = answer.session.expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let ack = send(
        server,
        reqwest::Method::POST,
        thread,
        Some(&session),
        Some(initialized),
    )
    .await;
    assert_eq!(ack.status, 202, "{}", ack.body);
    session
}

fn list_tools(
    server: &TestServer,
    thread: &str,
    session: &str,
    id: i64,
) -> impl Future<Output = Answer> {
    let (server, thread, session) = (server, thread.to_string(), session.to_string());
    async move { rpc(server, &thread, &session, id, "tools/list", json!({})).await }
}

/// rmcp's answer for an unknown session.
#[track_caller]
fn assert_unknown(answer: &Answer) {
    assert_eq!(answer.status, 404, "{}", answer.body);
    assert!(answer.body.contains("Session not found"), "{}", answer.body);
}

/// Makes every stored session look unused for two days.
async fn age_sessions(db: &Database) {
    let long_ago = Utc::now() - chrono::Duration::days(2);
    let sql = "UPDATE mcp_sessions SET last_used_at = $1";
    match db {
        Database::Sqlite { writer, .. } => {
            let held = writer.begin().await.unwrap();
            // As the store writes times into SQLite.
            let long_ago = long_ago.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, false);
            held.inline().unwrap().execute(sql, [long_ago]).unwrap();
            held.commit().await.unwrap();
        }
        Database::Postgres { pool, .. } => {
            sqlx::query(sql).bind(long_ago).execute(pool).await.unwrap();
        }
    }
}

fn state() -> SessionState {
    SessionState::new(
        serde_json::from_value(json!({"protocolVersion": VERSION, "capabilities": {},
            "clientInfo": {"name": "store-test", "version": "1"}}))
        .unwrap(),
    )
}

backend_tests! {
    async fn a_session_moves_between_replicas(engine) {
        let db = TestDb::new(engine).await;
        let a = replica(&db.db).await;
        let b = replica(&db.db).await;
        let thread = "roaming";
        let session = open_session(&a, thread).await;

        // B has never seen the session, and serves it.
        let tools = list_tools(&b, thread, &session, 1).await.result(1);
        assert_eq!(tools["tools"].as_array().unwrap().len(), 16);
        let call = rpc(&b, thread, &session, 2, "tools/call", json!({
            "name": "add_todos",
            "arguments": {"steps": [{"text": "Book the ferry"}],
                          "action_and_reasoning": "Adding the first step."}}))
        .await
        .result(2);
        assert_eq!(call["isError"], false, "{call}");
        let uri = format!("haico://thread/{thread}/plan");
        let read = rpc(&b, thread, &session, 3, "resources/read", json!({"uri": uri}))
            .await
            .result(3);
        assert!(read["contents"][0]["text"].as_str().unwrap().contains("Book the ferry"), "{read}");
        // And A still does.
        let read = rpc(&a, thread, &session, 4, "resources/read", json!({"uri": uri}))
            .await
            .result(4);
        assert!(read["contents"][0]["text"].as_str().unwrap().contains("Book the ferry"), "{read}");

        // Ending it on B ends it on A too.
        let ended = send(&b, reqwest::Method::DELETE, thread, Some(&session), None).await;
        assert!((200..300).contains(&ended.status), "{} {}", ended.status, ended.body);
        assert_unknown(&list_tools(&a, thread, &session, 5).await);
        assert_unknown(&list_tools(&b, thread, &session, 6).await);

        a.shutdown().await;
        b.shutdown().await;
        db.cleanup().await;
    }

    async fn an_expired_session_is_refused_everywhere(engine) {
        let db = TestDb::new(engine).await;
        let a = replica(&db.db).await;
        let b = replica(&db.db).await;
        let thread = "stale";
        let session = open_session(&a, thread).await;
        list_tools(&a, thread, &session, 1).await.result(1);

        age_sessions(&db.db).await;
        assert_unknown(&list_tools(&b, thread, &session, 2).await);
        // A held it in memory; it is closed there too.
        assert_unknown(&list_tools(&a, thread, &session, 3).await);
        // A new session works.
        let fresh = open_session(&b, thread).await;
        list_tools(&a, thread, &fresh, 4).await.result(4);

        a.shutdown().await;
        b.shutdown().await;
        db.cleanup().await;
    }

    async fn a_session_stays_on_its_thread(engine) {
        let db = TestDb::new(engine).await;
        let a = replica(&db.db).await;
        let b = replica(&db.db).await;
        let session = open_session(&a, "home").await;
        // Another thread exists, and the caller may use it: still the session is unknown there.
        open_session(&b, "elsewhere").await;
        assert_unknown(&list_tools(&b, "elsewhere", &session, 1).await);
        let call = rpc(&b, "elsewhere", &session, 2, "tools/call", json!({
            "name": "list_todos", "arguments": {"action_and_reasoning": "x"}})).await;
        assert_unknown(&call);
        // On the replica that holds it, the session refuses the other thread itself.
        let refused = rpc(&a, "elsewhere", &session, 3, "tools/call", json!({
            "name": "list_todos", "arguments": {"action_and_reasoning": "x"}})).await;
        let message = refused.message(3);
        assert_eq!(message["error"]["code"], -32600, "{message}");
        // The session still works on its own thread, on both replicas.
        list_tools(&b, "home", &session, 4).await.result(4);
        list_tools(&a, "home", &session, 5).await.result(5);
        // A DELETE on another thread's URL is refused as an unknown session and does not end
        // it, on either replica, not even for the request right after it (rmcp used to close
        // its local copy, and a request racing that close got an empty stream).
        for (round, replica) in [&a, &b, &a, &b, &a, &b].into_iter().enumerate() {
            let deleted = send(replica, reqwest::Method::DELETE, "elsewhere", Some(&session), None).await;
            assert_eq!(deleted.status, 404, "{}", deleted.body);
            let id = 6 + i64::try_from(round).unwrap();
            list_tools(replica, "home", &session, id).await.result(id);
        }

        a.shutdown().await;
        b.shutdown().await;
        db.cleanup().await;
    }

    async fn a_subscription_made_on_one_replica_is_announced_by_the_other(engine) {
        let db = TestDb::new(engine).await;
        let a = replica(&db.db).await;
        let b = replica(&db.db).await;
        let thread = "listening";
        let session = open_session(&a, thread).await;

        // The notification stream is open on A ...
        let stream = a
            .client
            .get(a.url(&format!("/mcp/{thread}")))
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", VERSION)
            .send()
            .await
            .unwrap();
        assert_eq!(stream.status(), 200);
        let mut stream = stream.bytes_stream();
        // ... the subscription goes to B ...
        let uri = format!("haico://thread/{thread}/plan");
        rpc(&b, thread, &session, 1, "resources/subscribe", json!({"uri": uri}))
            .await
            .result(1);
        // ... and so does the change.
        b.post(&format!("/api/threads/{thread}/todos"), &json!({"text": "Pack"}))
            .await
            .expect(201);
        let heard = tokio::time::timeout(Duration::from_secs(10), async {
            let mut seen = String::new();
            while let Some(chunk) = stream.next().await {
                seen.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
                if seen.contains("notifications/resources/updated") && seen.contains(&uri) {
                    return true;
                }
            }
            false
        })
        .await;
        assert_eq!(heard, Ok(true), "A announced the change B's subscription asked for");

        // Unsubscribing on B silences A.
        rpc(&b, thread, &session, 2, "resources/unsubscribe", json!({"uri": uri}))
            .await
            .result(2);
        b.post(&format!("/api/threads/{thread}/todos"), &json!({"text": "Go"}))
            .await
            .expect(201);
        let more = tokio::time::timeout(Duration::from_secs(2), async {
            let mut seen = String::new();
            while let Some(chunk) = stream.next().await {
                seen.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
                if seen.contains("notifications/resources/updated") {
                    return seen;
                }
            }
            seen
        })
        .await;
        assert!(more.is_err(), "no announcement after unsubscribing: {more:?}");

        drop(stream);
        a.shutdown().await;
        b.shutdown().await;
        db.cleanup().await;
    }

    async fn the_store_keeps_sessions_per_thread_until_unused(engine) {
        let db = TestDb::new(engine).await;
        let home = create_thread(&db.db, "store-home").await;
        let other = create_thread(&db.db, "store-other").await;
        let store = McpSessions::new(db.db.clone());

        // Stored within a request for `home`; outside one there is no thread to store.
        McpSessions::for_thread(home.clone(), store.store("s1", &state())).await.unwrap();
        assert!(store.store("s2", &state()).await.is_err());
        let loaded = McpSessions::for_thread(home.clone(), store.load("s1")).await.unwrap();
        assert_eq!(
            loaded.unwrap().initialize_params.client_info.name,
            "store-test"
        );
        // Unknown elsewhere, and when asked without a thread.
        assert!(McpSessions::for_thread(other.clone(), store.load("s1")).await.unwrap().is_none());
        assert!(store.load("s1").await.unwrap().is_none());
        assert!(McpSessions::for_thread(home.clone(), store.load("nope")).await.unwrap().is_none());
        assert_eq!(store.standing("s1", &home).await.unwrap(), Standing::Live);
        assert_eq!(store.standing("s1", &other).await.unwrap(), Standing::OtherThread);

        // Subscriptions belong to a stored session.
        assert!(store.subscribe("s1", "haico://thread/store-home/plan").await.unwrap());
        assert!(!store.subscribe("nope", "haico://thread/store-home/plan").await.unwrap());
        assert_eq!(store.subscriptions("s1").await.unwrap().len(), 1);
        store.unsubscribe("s1", "haico://thread/store-home/plan").await.unwrap();
        assert!(store.subscriptions("s1").await.unwrap().is_empty());

        // Deleting on another thread's request does nothing; on its own, it ends the session.
        McpSessions::for_thread(other.clone(), store.delete("s1")).await.unwrap();
        assert_eq!(store.standing("s1", &home).await.unwrap(), Standing::Live);
        store.subscribe("s1", "haico://thread/store-home/plan").await.unwrap();
        McpSessions::for_thread(home.clone(), store.delete("s1")).await.unwrap();
        assert_eq!(store.standing("s1", &home).await.unwrap(), Standing::Gone);
        assert!(store.subscriptions("s1").await.unwrap().is_empty());

        // Unused too long: refused (and forgotten) when asked for, swept when a session opens.
        McpSessions::for_thread(home.clone(), store.store("s3", &state())).await.unwrap();
        McpSessions::for_thread(home.clone(), store.store("s4", &state())).await.unwrap();
        age_sessions(&db.db).await;
        assert!(McpSessions::for_thread(home.clone(), store.load("s3")).await.unwrap().is_none());
        assert_eq!(store.standing("s3", &home).await.unwrap(), Standing::Gone);
        McpSessions::for_thread(home.clone(), store.store("s5", &state())).await.unwrap();
        assert_eq!(store.prune().await.unwrap(), 0, "s4 was swept when s5 was stored");
        assert_eq!(store.standing("s5", &home).await.unwrap(), Standing::Live);
        age_sessions(&db.db).await;
        assert_eq!(store.prune().await.unwrap(), 1);

        // A session goes with its thread.
        let gone = ThreadId::parse("store-other").unwrap();
        McpSessions::for_thread(gone.clone(), store.store("s6", &state())).await.unwrap();
        match &db.db {
            Database::Sqlite { writer, .. } => {
                let held = writer.begin().await.unwrap();
                held.inline().unwrap().execute("DELETE FROM threads WHERE id = 'store-other'", []).unwrap();
                held.commit().await.unwrap();
            }
            Database::Postgres { pool, .. } => {
                sqlx::query("DELETE FROM threads WHERE id = 'store-other'").execute(pool).await.unwrap();
            }
        }
        assert_eq!(store.standing("s6", &gone).await.unwrap(), Standing::Gone);

        db.cleanup().await;
    }
}
