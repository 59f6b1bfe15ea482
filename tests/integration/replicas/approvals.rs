//! Approval of other MCP servers' calls across replicas (issue 26): two `haico serve` processes
//! on one PostgreSQL database, each with the Python SDK server marked `"approval": "always"`.
//! A turn waits on one replica; the other lists the waiting call and decides it (approve, then
//! in a second turn decline), and the decision reaches the turn within a second; a decision
//! made twice, or on a call that is not waiting, is a `404` on either replica.

use crate::common;

use std::time::{Duration, Instant};

use common::{
    child::ChildServer,
    cluster::*,
    mock_llm::{Script, call},
    sse::SseReader,
};
use serde_json::{Value, json};

/// Waits until `server` reports the MCP server `name` ready.
async fn ready(server: &ChildServer, name: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let listed = get(server, "/api/mcp-servers").await;
        if listed.as_array().is_some_and(|all| {
            all.iter()
                .any(|s| s["name"] == name && s["status"] == "ready")
        }) {
            return;
        }
        assert!(Instant::now() < deadline, "{name} is not ready: {listed}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Starts a turn on `at` and returns its stream and the `approval` event's data.
async fn waiting(at: &ChildServer, message: &str) -> (SseReader, Value) {
    let mut chat = SseReader::post(
        &stream_client(),
        &chat_url(at, "appr"),
        &json!({"message": message}),
    )
    .await;
    let frames = until(&mut chat, "approval").await;
    let approval = frames.last().unwrap().data.clone();
    assert_eq!(approval["status"], "waiting", "{approval}");
    (chat, approval)
}

fn echo(text: &str) -> Script {
    Script::tool_calls(vec![call(
        "guarded__echo",
        json!({"text": text, "action_and_reasoning": "I check the echo service."}),
    )])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_on_any_replica_reaches_the_waiting_turn() {
    needs!(postgres, python_mcp);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mcp.json");
    let mut guarded = crate::mcp_client::python_entry(&[]);
    guarded["approval"] = json!("always");
    std::fs::write(
        &config,
        json!({"mcpServers": {"guarded": guarded}}).to_string(),
    )
    .unwrap();
    let path = config.display().to_string();
    let cluster = Cluster::start(
        2,
        vec![
            echo("one"),
            Script::text("Echoed."),
            echo("two"),
            Script::text("Left it."),
        ],
        &[("HAICO_MCP_SERVERS", path.as_str())],
    )
    .await;
    let r = &cluster.replicas;
    ready(&r[0], "guarded").await;
    ready(&r[1], "guarded").await;
    assert_eq!(
        post(&r[0], "/api/threads", json!({"id": "appr"})).await.0,
        201
    );

    // The turn waits on replica 0; replica 1 lists the call and approves it.
    let (mut chat, approval) = waiting(&r[0], "Echo one").await;
    let call_id = approval["call_id"].as_str().unwrap().to_string();
    let mut listed = approval.clone();
    listed.as_object_mut().unwrap().remove("status");
    for replica in r {
        assert_eq!(
            get(replica, "/api/threads/appr/approvals").await,
            json!([listed])
        );
    }
    assert_eq!(
        post(
            &r[1],
            "/api/threads/appr/approvals/9-9",
            json!({"approve": true})
        )
        .await
        .0,
        404
    );
    let asked = Instant::now();
    let (status, body) = post(
        &r[1],
        &format!("/api/threads/appr/approvals/{call_id}"),
        json!({"approve": true}),
    )
    .await;
    assert_eq!(
        (status, body),
        (200, json!({"call_id": call_id, "approved": true}))
    );
    let frames = until(&mut chat, "done").await;
    let reached = asked.elapsed();
    assert!(
        reached < Duration::from_secs(2),
        "the decision took {reached:?}"
    );
    let decided = frames
        .iter()
        .find(|f| f.event == "approval")
        .expect("the decision is announced");
    assert_eq!(decided.data["status"], "approved");
    let step = frames
        .iter()
        .find(|f| f.event == "step")
        .expect("the call's step");
    assert_eq!(
        step.data["result"],
        json!({"success": true, "summary": "echo: one"})
    );
    assert_eq!(frames.last().unwrap().data["status"], "completed");
    // Decided once, wherever it is asked again.
    for replica in r {
        let (status, _) = post(
            replica,
            &format!("/api/threads/appr/approvals/{call_id}"),
            json!({"approve": false}),
        )
        .await;
        assert_eq!(status, 404);
        assert_eq!(get(replica, "/api/threads/appr/approvals").await, json!([]));
    }

    // The other way round: the turn waits on replica 1, replica 0 declines.
    let (mut chat, approval) = waiting(&r[1], "Echo two").await;
    let call_id = approval["call_id"].as_str().unwrap().to_string();
    assert_eq!(
        get(&r[0], "/api/threads/appr/approvals")
            .await
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    let (status, _) = post(
        &r[0],
        &format!("/api/threads/appr/approvals/{call_id}"),
        json!({"approve": false}),
    )
    .await;
    assert_eq!(status, 200);
    let frames = until(&mut chat, "done").await;
    let step = frames
        .iter()
        .find(|f| f.event == "step")
        .expect("the call's step");
    assert_eq!(step.data["result"]["success"], false);
    assert!(
        step.data["result"]["error"]
            .as_str()
            .unwrap()
            .contains("the person declined"),
        "{step:?}"
    );
    assert_eq!(frames.last().unwrap().data["status"], "completed");
    // The model was asked four times: the two calls, and the answers after them.
    assert_eq!(cluster.mock.requests().len(), 4);
    cluster.cleanup().await;
}
