//! Log lines carry their context without saying so: a tool call's line sits inside the span of
//! its request (method, path, thread) and of the call itself (thread, tool, turn), and inside
//! an agent turn, the span of the turn (thread, turn index). Checked on what the process's
//! subscriber really prints, for a call over the tools endpoint and one made by the agent.

use crate::common;
use crate::common::agent as agent_support;

use std::{
    io::Write,
    sync::{Arc, Mutex, OnceLock},
};

use agent_support::*;
use common::mock_llm::{Script, call};
use serde_json::json;

/// Everything the subscriber printed, shared by the tests of this binary.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Installs the subscriber once for the whole binary; returns what it has printed so far.
fn captured() -> Captured {
    static CAPTURED: OnceLock<Captured> = OnceLock::new();
    CAPTURED
        .get_or_init(|| {
            let captured = Captured::default();
            let writer = captured.clone();
            tracing_subscriber::fmt()
                .with_env_filter("haico=info")
                .with_ansi(false)
                .with_writer(move || writer.clone())
                .init();
            captured
        })
        .clone()
}

/// The printed lines that mention `needle` and `thread`.
fn lines_with(captured: &Captured, needle: &str, thread: &str) -> Vec<String> {
    let text = String::from_utf8_lossy(&captured.0.lock().unwrap()).into_owned();
    text.lines()
        .filter(|line| line.contains(needle) && line.contains(thread))
        .map(str::to_string)
        .collect()
}

backend_tests! {
    async fn a_tool_calls_line_inherits_its_request_call_and_turn(engine) {
        let case = match engine {
            common::Engine::Sqlite => "sqlite",
            common::Engine::Postgres => "postgres",
        };
        // The subscriber is the process's: this test gets a process of its own (the body runs
        // inside `backend_tests!`'s module for it, so the module path already names the test).
        if !common::isolated::alone(&test_name!(case)) {
            return;
        }
        let captured = captured();
        let thread = match engine {
            common::Engine::Sqlite => "spans-sqlite",
            common::Engine::Postgres => "spans-postgres",
        };
        let script = vec![
            Script::tool_calls(vec![call(
                "set_objective",
                json!({"objective": "Plan a trip", "action_and_reasoning": "Noting the goal."}),
            )]),
            Script::text("Done."),
        ];
        let setup = Setup::openai(engine, script).await;
        setup.server.create_thread(thread).await;

        // Over the tools endpoint: the request's span and the call's.
        setup.server.tool_ok(thread, "list_todos", json!({"action_and_reasoning": "Look."})).await;
        let lines = lines_with(&captured, "Look.", thread);
        assert_eq!(lines.len(), 1, "{lines:?}");
        let line = &lines[0];
        assert!(line.contains(&format!("request{{http.request.method=POST url.path=/api/threads/{thread}/tools/list_todos thread=\"{thread}\"}}")), "{line}");
        assert!(line.contains(&format!("tool_call{{thread={thread} tool=\"list_todos\"}}")), "{line}");
        assert!(line.contains("tool call") && line.contains("success=true"), "{line}");

        // In an agent turn: the turn's span, and the call's with its turn index.
        let frames = whole_turn(setup.chat(thread, "Help me plan").await).await;
        assert_eq!(frames.last().unwrap().event, "done");
        let lines = lines_with(&captured, "Noting the goal.", thread);
        assert_eq!(lines.len(), 1, "{lines:?}");
        let line = &lines[0];
        assert!(line.contains(&format!("turn{{thread={thread} turn=1 replica=")), "{line}");
        assert!(line.contains(&format!("tool_call{{thread={thread} tool=\"set_objective\" turn=1}}")), "{line}");
        setup.cleanup().await;
    }
}
