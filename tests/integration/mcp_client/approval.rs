//! Calls of a server marked `"approval": "always"` (SPEC §13), against the Python SDK server:
//! the turn announces `approval` and waits; the person declines or approves over REST, the
//! turn is cancelled while it waits, or no one answers in time. Both engines. (Who may decide
//! — editors, not viewers — is checked with every other route in `people::access`.)

use std::time::Duration;

use haico::mcp_client::ClientOptions;
use serde_json::{Value, json};

use super::{McpSetup, python_entry, quick, steps};
use crate::common::{
    Engine,
    agent::{until_done, until_event},
    mock_llm::{Script, call},
    sse::{Frame, SseReader},
};

/// A server whose every call needs approval, a model that calls its `echo` once and then
/// answers, and a thread `t` with the turn started and waiting: returns the setup, the chat
/// stream and the `approval` event's data.
async fn waiting(engine: Engine, options: ClientOptions) -> (McpSetup, SseReader, Value) {
    let mut guarded = python_entry(&[]);
    guarded["approval"] = json!("always");
    let setup = McpSetup::new(
        engine,
        json!({"mcpServers": {"guarded": guarded}}),
        options,
        vec![
            Script::tool_calls(vec![call(
                "guarded__echo",
                json!({"text": "<b>hi</b>", "action_and_reasoning": "I check the echo service."}),
            )]),
            Script::text("Done."),
        ],
    )
    .await;
    let ready = setup.wait_for("guarded", "ready", |_| true).await;
    assert_eq!(ready["error"], Value::Null, "{ready}");
    setup.server.create_thread("t").await;
    let mut reader = crate::common::agent::chat(&setup.server, "t", "Echo something").await;
    let frames = until_event(&mut reader, "approval").await;
    let approval = frames.last().expect("an approval frame").data.clone();
    assert_eq!(approval["status"], "waiting", "{approval}");
    assert_eq!(approval["tool"], "guarded__echo");
    assert_eq!(
        approval["arguments"],
        json!({"text": "<b>hi</b>"}),
        "the reason is stripped"
    );
    assert_eq!(
        approval["action_and_reasoning"],
        "I check the echo service."
    );
    assert_eq!(approval["turn_index"], 1);
    assert!(
        steps(&frames).is_empty(),
        "nothing was called yet: {frames:?}"
    );
    (setup, reader, approval)
}

/// The `approval` frame that ended the wait, and the turn's one step.
fn ended(frames: &[Frame]) -> (Value, Value) {
    let decided = frames
        .iter()
        .find(|f| f.event == "approval")
        .expect("the decision is announced")
        .data
        .clone();
    let stepped = steps(frames);
    assert_eq!(stepped.len(), 1, "{frames:?}");
    assert_eq!(stepped[0].0, "guarded__echo");
    (decided, stepped[0].1.clone())
}

fn approvals_path(rest: &str) -> String {
    format!("/api/threads/t/approvals{rest}")
}

backend_tests! {
    async fn a_declined_call_is_not_made_and_the_turn_goes_on(engine) {
        needs!(python_mcp);
        let (setup, mut reader, approval) = waiting(engine, quick(Duration::from_secs(30))).await;
        let call_id = approval["call_id"].as_str().unwrap().to_string();

        // A page opened now sees the same request.
        let listed = setup.server.get(&approvals_path("")).await.expect(200);
        let mut expected = approval.clone();
        expected.as_object_mut().unwrap().remove("status");
        assert_eq!(listed, json!([expected]));

        // Bad bodies and unknown calls change nothing.
        let bad = setup.server.post(&approvals_path(&format!("/{call_id}")), &json!({"approve": "yes"})).await;
        assert!(matches!(bad.status.as_u16(), 400 | 422), "{:?}", bad.body);
        assert!(bad.body["error"].is_string(), "{:?}", bad.body);
        let extra = setup.server.post(&approvals_path(&format!("/{call_id}")), &json!({"approve": true, "x": 1})).await;
        assert!(matches!(extra.status.as_u16(), 400 | 422), "{:?}", extra.body);
        let unknown = setup.server.post(&approvals_path("/9-9"), &json!({"approve": true})).await.expect(404);
        assert!(unknown["error"].as_str().unwrap().contains("9-9"), "{unknown}");
        setup.server.get("/api/threads/nope/approvals").await.expect(404);
        assert_eq!(setup.server.get(&approvals_path("")).await.expect(200), json!([expected]));

        let decided = setup.server.post(&approvals_path(&format!("/{call_id}")), &json!({"approve": false})).await.expect(200);
        assert_eq!(decided, json!({"call_id": call_id, "approved": false}));
        // Decided once: a second decision finds nothing.
        setup.server.post(&approvals_path(&format!("/{call_id}")), &json!({"approve": true})).await.expect(404);

        let frames = until_done(&mut reader).await;
        assert_eq!(frames.last().unwrap().data["status"], "completed", "{frames:?}");
        let (status, envelope) = ended(&frames);
        assert_eq!(status["status"], "declined");
        assert_eq!(status["call_id"], call_id.as_str());
        assert_eq!(envelope["success"], false);
        assert!(envelope["error"].as_str().unwrap().contains("the person declined"), "{envelope}");
        // The model read the refusal, then answered.
        let requests = setup.mock.requests();
        assert_eq!(requests.len(), 2);
        assert!(requests[1].body.to_string().contains("the person declined"));
        assert_eq!(setup.server.get(&approvals_path("")).await.expect(200), json!([]));
        // The step is in the conversation like any other.
        let messages = crate::common::agent::messages(&setup.server, "t").await;
        assert!(json!(messages).to_string().contains("the person declined"), "{messages:?}");
        // And counted: how often people say no, per server.
        let metrics = setup.server.client.get(setup.server.url("/metrics")).send().await.unwrap().text().await.unwrap();
        assert!(
            metrics.lines().any(|l| l.starts_with("haico_mcp_approvals_total")
                && l.contains("server=\"guarded\"") && l.contains("decision=\"declined\"")),
            "{metrics}"
        );
        setup.cleanup().await;
    }

    async fn an_approved_call_is_made(engine) {
        needs!(python_mcp);
        let (setup, mut reader, approval) = waiting(engine, quick(Duration::from_secs(30))).await;
        let call_id = approval["call_id"].as_str().unwrap();
        setup.server.post(&approvals_path(&format!("/{call_id}")), &json!({"approve": true})).await.expect(200);
        let frames = until_done(&mut reader).await;
        assert_eq!(frames.last().unwrap().data["status"], "completed", "{frames:?}");
        let (status, envelope) = ended(&frames);
        assert_eq!(status["status"], "approved");
        assert_eq!(envelope, json!({"success": true, "summary": "echo: <b>hi</b>"}));
        assert_eq!(setup.server.get(&approvals_path("")).await.expect(200), json!([]));
        setup.cleanup().await;
    }

    async fn a_waiting_turn_can_be_cancelled(engine) {
        needs!(python_mcp);
        let (setup, mut reader, approval) = waiting(engine, quick(Duration::from_secs(30))).await;
        let call_id = approval["call_id"].as_str().unwrap().to_string();
        setup.server.post("/api/threads/t/cancel", &json!({})).await.expect(202);
        let frames = until_done(&mut reader).await;
        assert_eq!(frames.last().unwrap().data["status"], "cancelled", "{frames:?}");
        let (status, envelope) = ended(&frames);
        assert_eq!(status["status"], "cancelled");
        assert!(envelope["error"].as_str().unwrap().contains("cancelled"), "{envelope}");
        assert_eq!(setup.server.get(&approvals_path("")).await.expect(200), json!([]));
        setup.server.post(&approvals_path(&format!("/{call_id}")), &json!({"approve": true})).await.expect(404);
        // The model was asked once: the cancelled turn did not go on.
        assert_eq!(setup.mock.requests().len(), 1);
        setup.cleanup().await;
    }

    async fn an_unanswered_request_is_declined_after_the_timeout(engine) {
        needs!(python_mcp);
        let options = ClientOptions {
            approval_timeout: Duration::from_secs(1),
            ..quick(Duration::from_secs(30))
        };
        let (setup, mut reader, approval) = waiting(engine, options).await;
        let frames = until_done(&mut reader).await;
        assert_eq!(frames.last().unwrap().data["status"], "completed", "{frames:?}");
        let (status, envelope) = ended(&frames);
        assert_eq!(status["status"], "timed_out");
        assert!(envelope["error"].as_str().unwrap().contains("within 1 s"), "{envelope}");
        let call_id = approval["call_id"].as_str().unwrap();
        setup.server.post(&approvals_path(&format!("/{call_id}")), &json!({"approve": true})).await.expect(404);
        setup.cleanup().await;
    }
}
