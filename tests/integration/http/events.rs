//! The thread events stream: live fan-out, sources, ordering and resuming with Last-Event-ID,
//! also across a server restart. Both engines.

use crate::common;

use std::time::Duration;

use common::{TestDb, server::TestServer, sse::SseReader};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(10);

backend_tests! {
    async fn two_subscribers_see_agent_and_user_changes_in_order(engine) {
        let db = TestDb::new(engine).await;
        let server = TestServer::start(&db.db).await;
        server.create_thread("ev").await;
        let url = server.url("/api/threads/ev/events");
        let mut a = SseReader::open(&server.client, &url, None).await;
        let mut b = SseReader::open(&server.client, &url, None).await;

        server.tool_ok("ev", "add_todos", json!({"action_and_reasoning": "Plan.", "steps": [{"text": "one"}]})).await;
        server.tool_ok("ev", "chart_generator", json!({"action_and_reasoning": "Show.", "chart_type": "bar", "title": "T",
            "data": {"labels": ["x"], "series": [{"name": "s", "values": [1]}]}})).await;
        server.post("/api/threads/ev/preferences", &json!({"title": "Quiet"})).await.expect(201);
        // A failed call and a read announce nothing.
        server.tool("ev", "add_todos", json!({"action_and_reasoning": "Bad.", "steps": []})).await;
        server.tool_ok("ev", "list_todos", json!({"action_and_reasoning": "Look."})).await;
        server.tool_ok("ev", "set_objective", json!({"action_and_reasoning": "Goal.", "objective": "Ship"})).await;

        for reader in [&mut a, &mut b] {
            let f1 = reader.next(WAIT).await;
            assert_eq!((f1.id, f1.event.as_str()), (Some(1), "workspace"));
            assert_eq!(f1.data, json!({"panels": ["plan"], "source": "agent"}));
            let f2 = reader.next(WAIT).await;
            assert_eq!((f2.id, f2.event.as_str()), (Some(2), "artifact"));
            assert_eq!(f2.data["artifact_type"], "bar_chart");
            assert_eq!(f2.data["title"], "T");
            assert_eq!(f2.data["turn_index"], 0);
            assert!(f2.data["artifact_id"].as_i64().is_some());
            assert_eq!(f2.data["payload"]["data"]["labels"], json!(["x"]));
            let f3 = reader.next(WAIT).await;
            assert_eq!((f3.id, f3.event.as_str()), (Some(3), "workspace"));
            assert_eq!(f3.data, json!({"panels": ["artifacts"], "source": "agent"}));
            let f4 = reader.next(WAIT).await;
            assert_eq!((f4.id, f4.event.as_str()), (Some(4), "workspace"));
            assert_eq!(f4.data, json!({"panels": ["preferences"], "source": "user"}));
            let f5 = reader.next(WAIT).await;
            assert_eq!((f5.id, f5.event.as_str()), (Some(5), "workspace"));
            assert_eq!(f5.data, json!({"panels": ["objective"], "source": "agent"}));
        }
        server.shutdown().await;
        db.cleanup().await;
    }

    async fn resuming_with_last_event_id_replays_exactly_what_was_missed(engine) {
        let db = TestDb::new(engine).await;
        let server = TestServer::start(&db.db).await;
        server.create_thread("re").await;
        let url = server.url("/api/threads/re/events");
        for i in 0..5 {
            server.tool_ok("re", "append_to_document", json!({"action_and_reasoning": "Write.", "text": format!("{i}")})).await;
        }
        // A client that saw up to 2 gets 3, 4, 5 and then live events, no repeats.
        let mut r = SseReader::open(&server.client, &url, Some(2)).await;
        for expected in 3..=5 {
            let f = r.next(WAIT).await;
            assert_eq!(f.id, Some(expected));
        }
        server.tool_ok("re", "set_objective", json!({"action_and_reasoning": "Goal.", "objective": "x"})).await;
        let f = r.next(WAIT).await;
        assert_eq!((f.id, f.data["panels"].clone()), (Some(6), json!(["objective"])));
        assert!(r.try_next(Duration::from_millis(300)).await.is_none(), "no duplicates");
        // A client without Last-Event-ID starts at the present.
        let mut fresh = SseReader::open(&server.client, &url, None).await;
        assert!(fresh.try_next(Duration::from_millis(300)).await.is_none());
        // The query parameter works like the header.
        let mut q = SseReader::open(&server.client, &format!("{url}?last_event_id=5"), None).await;
        assert_eq!(q.next(WAIT).await.id, Some(6));
        server.shutdown().await;

        // After a restart (a new server on the same database) the log is still there.
        let server = TestServer::start(&db.db).await;
        let mut r = SseReader::open(&server.client, &server.url("/api/threads/re/events"), Some(4)).await;
        assert_eq!(r.next(WAIT).await.id, Some(5));
        assert_eq!(r.next(WAIT).await.id, Some(6));
        server.tool_ok("re", "append_to_document", json!({"action_and_reasoning": "More.", "text": "z"})).await;
        assert_eq!(r.next(WAIT).await.id, Some(7));
        server.shutdown().await;
        db.cleanup().await;
    }

    async fn events_endpoint_rejects_unknown_threads_and_bad_ids(engine) {
        let db = TestDb::new(engine).await;
        let server = TestServer::start(&db.db).await;
        server.get("/api/threads/nope/events").await.error(404);
        server.create_thread("ok").await;
        let resp = server
            .client
            .get(server.url("/api/threads/ok/events"))
            .header("last-event-id", "abc")
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 400);
        server.get("/api/threads/ok/events?last_event_id=x").await.error(400);
        server.shutdown().await;
        db.cleanup().await;
    }

    async fn concurrent_writers_deliver_every_event_once_in_sequence(engine) {
        let db = TestDb::new(engine).await;
        let server = TestServer::start(&db.db).await;
        server.create_thread("many").await;
        let mut r = SseReader::open(&server.client, &server.url("/api/threads/many/events"), None).await;
        let mut tasks = Vec::new();
        for i in 0..8 {
            let client = server.client.clone();
            let url = server.url("/api/threads/many/tools/append_to_document");
            tasks.push(tokio::spawn(async move {
                for j in 0..10 {
                    let resp = client
                        .post(&url)
                        .json(&json!({"action_and_reasoning": "Write.", "text": format!("{i}{j}")}))
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(resp.status(), 200);
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        for expected in 1..=80 {
            assert_eq!(r.next(WAIT).await.id, Some(expected));
        }
        assert!(r.try_next(Duration::from_millis(300)).await.is_none());
        server.shutdown().await;
        db.cleanup().await;
    }
}
