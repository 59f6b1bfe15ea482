//! Other MCP servers in the page (issue 26), against the Python SDK test server: the thread's
//! "Tools" dialog lists the configured servers with their status and saves the thread's choice
//! through `PATCH`; a call of a server marked `"approval": "always"` waits in the trace with the
//! tool, its arguments (shown as inert text) and the agent's reason, and the person's Approve
//! makes it (its result in the trace) while Decline turns it into a failed step.

use super::*;
use crate::mcp_client::python_entry;

/// Waits until `GET /api/mcp-servers` reports every server of `names` ready.
async fn servers_ready(server: &Server, names: &[&str]) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let listed = server.get("/api/mcp-servers").await;
        let ready = names.iter().all(|name| {
            listed.as_array().is_some_and(|all| {
                all.iter()
                    .any(|s| s["name"] == *name && s["status"] == "ready")
            })
        });
        if ready {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "servers not ready: {listed}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// A value the page must show as text: were it parsed as HTML, the image's handler would set
/// `window.__pwned`.
const HOSTILE: &str = "<img src=x onerror=\"window.__pwned=1\"> & <b>bold</b>";

async fn approve_and_decline_in_the_trace(engine: Engine) {
    needs!(python_mcp);
    let mut guarded = python_entry(&[]);
    guarded["approval"] = json!("always");
    let script = json!({"responses": [
        {"text": "", "tool_calls": [{"name": "guarded__echo", "arguments": {
            "text": HOSTILE, "action_and_reasoning": "I check the echo service with your text."}}]},
        {"text": "The echo service answered."},
        {"text": "", "tool_calls": [{"name": "guarded__echo", "arguments": {
            "text": "again", "action_and_reasoning": "I try the echo service once more."}}]},
        {"text": "You declined, so I left it."}
    ]});
    let server = Server::start(
        ServerOptions::new(engine)
            .replay(script)
            .mcp_servers(json!({"mcpServers": {"guarded": guarded}})),
    )
    .await;
    servers_ready(&server, &["guarded"]).await;
    let thread = server.create_thread("appr", "Approvals").await;
    let browser = Browser::start().await;
    open_thread(&browser, &server, &thread).await;

    // The request waits in the trace: tool, reason, arguments as text, Approve / Decline.
    send_chat(&browser, "Echo my text").await;
    browser
        .wait_for("#messages .call.approval.waiting .approval-approve")
        .await;
    browser
        .wait_text("#messages .call.approval .call-tool", "guarded__echo")
        .await;
    browser
        .wait_text(
            "#messages .call.approval .call-reason",
            "I check the echo service with your text.",
        )
        .await;
    let shown = browser
        .text("#messages .call.approval .approval-arguments")
        .await
        .unwrap_or_default();
    assert!(
        shown.contains(HOSTILE.replace('"', "\\\"").as_str()),
        "{shown}"
    );
    assert_eq!(
        browser
            .count("#messages .approval-arguments img, #messages .approval-arguments b")
            .await,
        0
    );
    assert_eq!(
        browser.count("#messages li.call:not(.approval)").await,
        0,
        "nothing was called yet"
    );
    // The server lists the same request.
    let waiting = server
        .get(&format!("/api/threads/{thread}/approvals"))
        .await;
    assert_eq!(waiting[0]["tool"], json!("guarded__echo"), "{waiting}");

    // Approved: the call is made and its result is in the trace. (When the turn ends the
    // chat draws it again from what was stored: the step stays, the transient request goes.)
    browser
        .click("#messages .call.approval.waiting .approval-approve")
        .await;
    browser
        .wait_text(
            "#messages .msg.assistant .msg-content",
            "The echo service answered.",
        )
        .await;
    browser
        .wait_text_content(
            "#messages li.call.ok:not(.approval) .call-result",
            "echo: <img src=x",
        )
        .await;
    browser
        .wait_text_content("#messages .call-tool", "guarded__echo")
        .await;
    assert_eq!(
        browser
            .count("#messages .call-result img, #messages .call-result b")
            .await,
        0
    );
    assert_eq!(
        server
            .get(&format!("/api/threads/{thread}/approvals"))
            .await,
        json!([])
    );

    // Declined: the call is not made, its step fails saying why, and the turn goes on.
    send_chat(&browser, "Once more").await;
    browser
        .wait_for("#messages .turn[data-turn-index=\"2\"] .call.approval.waiting .approval-decline")
        .await;
    browser
        .click("#messages .turn[data-turn-index=\"2\"] .call.approval.waiting .approval-decline")
        .await;
    browser
        .wait_text(
            "#messages .turn[data-turn-index=\"2\"] .msg.assistant .msg-content",
            "You declined",
        )
        .await;
    browser
        .wait_text_content(
            "#messages .turn[data-turn-index=\"2\"] li.call.failed:not(.approval) .call-result",
            "the person declined",
        )
        .await;
    assert_eq!(
        browser.js("return window.__pwned ?? null;", vec![]).await,
        json!(null)
    );
    browser.assert_no_js_errors().await;
}
on_both_engines!(approve_and_decline_in_the_trace);

async fn the_tools_dialog_chooses_the_threads_servers(engine: Engine) {
    needs!(python_mcp);
    let server = Server::start(
        ServerOptions::new(engine).mcp_servers(json!({"mcpServers": {
            "alpha": python_entry(&[]),
            "beta": python_entry(&[]),
            "broken": {"command": "/nonexistent/mcp-server"}
        }})),
    )
    .await;
    servers_ready(&server, &["alpha", "beta"]).await;
    let thread = server.create_thread("tools", "Tools").await;
    let browser = Browser::start().await;
    open_thread(&browser, &server, &thread).await;

    // Every configured server, its status, and all checked (the default: `null`).
    browser.wait_visible("#servers-open").await;
    browser.click("#servers-open").await;
    browser.wait_count("#servers-list li.server", 3).await;
    let rows = browser
        .js(
            "return [...document.querySelectorAll('#servers-list li.server')].map((li) => ({
               name: li.dataset.server, status: li.dataset.status,
               checked: li.querySelector('input').checked, disabled: li.querySelector('input').disabled}));",
            vec![],
        )
        .await;
    assert_eq!(
        rows[0],
        json!({"name": "alpha", "status": "ready", "checked": true, "disabled": true}),
        "{rows}"
    );
    assert_eq!(rows[1]["name"], json!("beta"));
    assert_eq!(rows[2]["name"], json!("broken"));
    assert_ne!(rows[2]["status"], json!("ready"), "{rows}");
    assert_eq!(
        browser
            .js(
                "return document.querySelector('#servers-all').checked;",
                vec![]
            )
            .await,
        json!(true)
    );

    // Only alpha: saved through PATCH, and the thread says so.
    browser.click("#servers-all").await;
    browser.click("#server-beta").await;
    browser.click("#server-broken").await;
    browser.click("#servers-save").await;
    browser.wait_text("#servers-status", "alpha").await;
    assert_eq!(
        server.get(&format!("/api/threads/{thread}")).await["mcp_servers"],
        json!(["alpha"])
    );

    // Opened again (after a reload), the dialog shows the saved choice.
    open_thread(&browser, &server, &thread).await;
    browser.wait_visible("#servers-open").await;
    browser.click("#servers-open").await;
    browser.wait_count("#servers-list li.server", 3).await;
    let checked = browser
        .js("return [...document.querySelectorAll('#servers-list input.server-choice')].map((b) => b.checked);", vec![])
        .await;
    assert_eq!(checked, json!([true, false, false]));
    assert_eq!(
        browser
            .js(
                "return document.querySelector('#servers-all').checked;",
                vec![]
            )
            .await,
        json!(false)
    );

    // None, then all again.
    browser.click("#server-alpha").await;
    browser.click("#servers-save").await;
    browser
        .wait_text("#servers-status", "no other server")
        .await;
    assert_eq!(
        server.get(&format!("/api/threads/{thread}")).await["mcp_servers"],
        json!([])
    );
    browser.click("#servers-all").await;
    browser.click("#servers-save").await;
    browser.wait_text("#servers-status", "every server").await;
    assert_eq!(
        server.get(&format!("/api/threads/{thread}")).await["mcp_servers"],
        json!(null)
    );
    browser.assert_no_js_errors().await;
}
on_both_engines!(the_tools_dialog_chooses_the_threads_servers);
