//! The web UI end to end: a real `haico serve` (replay provider) and a real headless Chromium.
//! Selectors come from docs/UI.md only. Needs Debian's `chromium` and `chromium-driver`
//! (`.ci/run` installs them) and, for the `::postgres` cases, PostgreSQL.

pub(crate) mod browser;
use crate::common;

use browser::{Browser, Server, ServerOptions};
use common::Engine;
use serde_json::json;

/// The harness itself: the browser runs scripts, waits, and reaches a real `haico serve`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn harness_smoke() {
    needs!(chromium);
    let browser = Browser::start().await;
    browser
        .goto("data:text/html,<title>t</title><p id=greeting>hello <b>world</b></p>")
        .await;
    browser.wait_text("#greeting", "hello world").await;
    assert_eq!(browser.count("p").await, 1);
    assert_eq!(
        browser.text("#greeting").await.as_deref(),
        Some("hello world")
    );
    let size = browser
        .js("return [innerWidth, innerHeight];", vec![])
        .await;
    assert_eq!(size, json!([1280, 800]), "default viewport");
    browser.set_viewport(390, 844).await;
    assert_eq!(
        browser
            .js("return [innerWidth, innerHeight];", vec![])
            .await,
        json!([390, 844])
    );
    browser.assert_no_js_errors().await;
    let server = Server::start(ServerOptions::new(Engine::Sqlite)).await;
    browser.goto(&server.url("/healthz")).await;
    browser.wait_text("body", "ok").await;
    let thread = server.create_thread("smoke", "Smoke").await;
    let env = server
        .tool_ok(&thread, "set_objective", json!({"objective": "Smoke test"}))
        .await;
    assert_eq!(env["success"], json!(true));
    assert_eq!(
        server.workspace(&thread).await["objective"],
        json!("Smoke test")
    );
}

/// Makes `name::sqlite` and `name::postgres` from `async fn name(engine: Engine)`.
macro_rules! on_both_engines {
    ($name:ident) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                needs!(chromium);
                super::$name(crate::common::Engine::Sqlite).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                needs!(chromium, postgres);
                super::$name(crate::common::Engine::Postgres).await;
            }
        }
    };
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Opens `/t/{thread}` and waits for `body[data-ready="true"]`.
async fn open_thread(browser: &Browser, server: &Server, thread: &str) {
    browser.open(&server.url(&format!("/t/{thread}"))).await;
    browser
        .wait_attr("#connection-status", "data-state", "live")
        .await;
}

/// Types a chat message and sends it with `#chat-send`.
async fn send_chat(browser: &Browser, text: &str) {
    browser.type_into("#chat-input", text).await;
    browser.click("#chat-send").await;
}

/// The replay script of scenario (a): one response with four tool calls, then the answer
/// (held back 2.5 s, so the test sees the trace before the answer).
fn planning_script() -> serde_json::Value {
    json!({"responses": [
        {"text": "Let me set up the workspace.", "tool_calls": [
            {"name": "set_objective", "arguments": {
                "objective": "Plan a 5-day trip to Lisbon under 2,000 EUR",
                "action_and_reasoning": "Noting the goal: a five-day Lisbon trip on a budget."}},
            {"name": "add_todos", "arguments": {
                "steps": [{"text": "Pick dates"}, {"text": "Book flights"},
                          {"text": "Compare fares", "depth": 1}, {"text": "Find a hotel"}],
                "action_and_reasoning": "Laying out the plan as an outline."}},
            {"name": "update_document", "arguments": {
                "title": "Lisbon trip",
                "content": "## Budget\n\n- Flights: 400 EUR\n- Hotel: 900 EUR\n\n**Total**: 1,300 EUR\n",
                "action_and_reasoning": "Drafting the budget in the document."}},
            {"name": "chart_generator", "arguments": {
                "chart_type": "bar", "title": "Budget by item",
                "data": {"labels": ["Flights", "Hotel", "Food"],
                         "series": [{"name": "EUR", "values": [400, 900, 350]}]},
                "action_and_reasoning": "Charting the budget per item."}}
        ], "usage": {"prompt_tokens": 4000, "cached_tokens": 0, "completion_tokens": 300}},
        {"text": "Your trip is planned: four steps, a budget and a chart.", "delay_ms": 2500,
         "usage": {"prompt_tokens": 4400, "cached_tokens": 4000, "completion_tokens": 20}}
    ]})
}

// The scenarios, by area (after the macro and helpers above, which they use).
mod chat;
mod documents;
mod history;
mod layout;
mod live;
mod mcp;
mod people;
mod studies;
mod suggestions;
