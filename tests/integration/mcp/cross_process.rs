//! A separate `haico mcp` process on the same database as a running server: the server's
//! events stream shows the MCP client's changes (`source: "agent"`) within one second, on
//! SQLite and on PostgreSQL.

use crate::common;
use crate::common::mcp as mcp_support;

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use common::{TestDb, server::TestServer, sse::SseReader, tid};
use haico::{
    agent::{AgentConfig, providers::UnconfiguredModel},
    events::{DEFAULT_POLL_INTERVAL, PollingBus},
    http::AppState,
    store::Database,
};
use mcp_support::*;
use serde_json::json;

/// The promise: a change shows up in every open UI within this.
const LIVE: Duration = Duration::from_secs(1);

/// A server that follows other processes' events, wired like `haico serve`.
async fn polling_server(db: &Database) -> TestServer {
    let bus = PollingBus::new(db.clone());
    // The task ends by itself when the server (and with it the bus) is gone.
    drop(bus.spawn_poller(DEFAULT_POLL_INTERVAL));
    let state = AppState::with_bus(
        db.clone(),
        Arc::new(UnconfiguredModel::new("no model in this test")),
        AgentConfig::default(),
        bus,
    );
    TestServer::with_state(state).await
}

backend_tests! {
    async fn mcp_changes_reach_the_servers_event_stream_within_a_second(engine) {
        let db = TestDb::new(engine).await;
        let server = polling_server(&db.db).await;
        let thread = "cross-process";
        server.create_thread(thread).await;
        let mut events = SseReader::open(
            &server.client,
            &server.url(&format!("/api/threads/{thread}/events")),
            None,
        )
        .await;
        let (client, _notes) = stdio_client(&db.url, thread, Lifecycle::Initialize).await;

        for (i, (tool, args, panel)) in [
            ("set_objective", json!({"objective": "Write the report"}), "objective"),
            ("add_todos", json!({"steps": [{"text": "Outline"}, {"text": "Draft"}]}), "plan"),
            ("append_to_document", json!({"text": "Intro."}), "document"),
        ]
        .into_iter()
        .enumerate()
        {
            let mut args = args;
            args["action_and_reasoning"] = json!(format!("Step {i} of the report."));
            call_ok(&client, tool, args).await;
            let done = Instant::now();
            let frame = events.next(LIVE).await;
            let waited = done.elapsed();
            assert_eq!(frame.event, "workspace", "{frame:?}");
            assert_eq!(frame.data["source"], "agent");
            assert_eq!(frame.data["panels"], json!([panel]));
            assert!(waited < LIVE, "{tool} showed up after {waited:?}");
        }
        // Two quick calls in a row: both events arrive, in order, none lost.
        call_ok(&client, "toggle_todos", json!({"indices": [1], "action_and_reasoning": "Done."})).await;
        call_ok(&client, "toggle_todos", json!({"indices": [2], "action_and_reasoning": "Done."})).await;
        let first = events.next(LIVE).await;
        let second = events.next(LIVE).await;
        assert_eq!((first.event.as_str(), second.event.as_str()), ("workspace", "workspace"));
        assert_eq!(second.id.unwrap(), first.id.unwrap() + 1);

        let workspace = server.workspace(thread).await;
        assert_eq!(workspace["objective"], "Write the report");
        assert_eq!(workspace["todos"][1]["done"], true);

        client.cancel().await.unwrap();
        server.shutdown().await;
        db.cleanup().await;
    }
}

backend_tests! {
    async fn the_poller_announces_what_another_process_logged(engine) {
        use futures::StreamExt;
        use haico::{
            events::{SharedBus, subscribe},
            store::PoolConfig,
            tools::{ToolRuntime, build_tools},
        };

        let here = TestDb::new(engine).await;
        let thread = common::create_thread(&here.db, "polled").await;
        // "Another process": its own pools and its own bus on the same database.
        let there = Database::connect(&here.url, &PoolConfig::default()).await.unwrap();
        let elsewhere = ToolRuntime::new(there.clone());
        let bus = PollingBus::new(here.db.clone());
        let shared: SharedBus = bus.clone();
        let mut events = Box::pin(subscribe(here.db.clone(), shared.clone(), &tid("polled"), None).await.unwrap());
        let tools = build_tools(&thread);

        for (tool, args) in [
            ("set_objective", json!({"objective": "A", "action_and_reasoning": "x"})),
            ("add_todos", json!({"steps": [{"text": "B"}], "action_and_reasoning": "x"})),
        ] {
            assert!(elsewhere.call(&tools, tool, args).await.envelope.success);
        }
        let quiet = tokio::time::timeout(Duration::from_millis(300), events.next()).await;
        assert!(quiet.is_err(), "nothing arrives before the poller looks");

        // One round announces the newest event; the subscriber reads the one before from the log.
        assert_eq!(bus.poll_once().await.unwrap(), 1);
        let first = events.next().await.unwrap().unwrap();
        let second = events.next().await.unwrap().unwrap();
        assert_eq!((first.seq, second.seq), (Some(1), Some(2)));
        assert_eq!(first.data, r#"{"panels":["objective"],"source":"agent"}"#);
        assert_eq!(second.data, r#"{"panels":["plan"],"source":"agent"}"#);
        assert_eq!(bus.poll_once().await.unwrap(), 0, "nothing moved since");

        // Changes made here are announced at once and not read back by the poller.
        let local = ToolRuntime::with_bus(here.db.clone(), shared);
        let call = local
            .call(&tools, "toggle_todos", json!({"indices": [1], "action_and_reasoning": "x"}))
            .await;
        assert!(call.envelope.success);
        assert_eq!(events.next().await.unwrap().unwrap().seq, Some(3));
        assert_eq!(bus.poll_once().await.unwrap(), 0);

        drop(events);
        assert_eq!(bus.poll_once().await.unwrap(), 0, "nobody listens: nothing is read");
        there.close().await;
        here.cleanup().await;
    }
}
