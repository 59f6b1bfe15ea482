//! The web UI end to end: a real `haico serve` (replay provider) and a real headless Chromium.
//! Selectors come from docs/UI.md only. Needs Debian's `chromium` and `chromium-driver`
//! (`.ci/run` installs them) and, for the `::postgres` cases, PostgreSQL.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod browser;
mod common;

use browser::{Browser, Server, ServerOptions};
use common::Engine;
use serde_json::json;

/// The harness itself: the browser runs scripts, waits, and reaches a real `haico serve`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn harness_smoke() {
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
                super::$name(crate::common::Engine::Sqlite).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
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
        ]},
        {"text": "Your trip is planned: four steps, a budget and a chart.", "delay_ms": 2500}
    ]})
}

// ---------------------------------------------------------------------------------------------
// (a) a chat turn: the answer, the reasoning trace, and every panel it changed
// ---------------------------------------------------------------------------------------------

async fn chat_turn_streams_answer_trace_and_panels(engine: Engine) {
    let server = Server::start(ServerOptions::new(engine).replay(planning_script())).await;
    let thread = server.create_thread("lisbon", "Lisbon").await;
    let browser = Browser::start().await;
    open_thread(&browser, &server, &thread).await;

    send_chat(&browser, "Help me plan five days in Lisbon under 2,000 EUR").await;
    browser
        .wait_text(".turn .msg.user", "five days in Lisbon")
        .await;

    // The trace arrives step by step, before the (delayed) answer.
    browser.wait_count(".turn details.reasoning .step", 4).await;
    let answer = browser
        .texts(".turn .msg.assistant .msg-content")
        .await
        .join(" ");
    assert!(
        !answer.contains("four steps, a budget and a chart"),
        "the answer was complete before its trace was shown (no streaming?): {answer}"
    );
    browser
        .wait_text(
            ".turn .msg.assistant .msg-content",
            "Your trip is planned: four steps, a budget and a chart.",
        )
        .await;

    let summary = browser.texts(".turn details.reasoning > summary").await;
    assert!(
        summary.iter().any(|s| s.contains("Internal reasoning")),
        "details.reasoning summary: {summary:?}"
    );
    let tools = browser.texts(".turn .step .step-tool").await;
    for (i, tool) in [
        "set_objective",
        "add_todos",
        "update_document",
        "chart_generator",
    ]
    .iter()
    .enumerate()
    {
        assert!(
            tools.get(i).is_some_and(|t| t.contains(tool)),
            "step {i} should be {tool}: {tools:?}"
        );
    }
    let reasons = browser.texts(".turn .step .step-reason").await;
    for (i, reason) in [
        "Noting the goal",
        "Laying out the plan",
        "Drafting the budget",
        "Charting the budget",
    ]
    .iter()
    .enumerate()
    {
        assert!(
            reasons.get(i).is_some_and(|r| r.contains(reason)),
            "step {i} should give its action_and_reasoning {reason:?}: {reasons:?}"
        );
    }
    assert_eq!(
        browser.count(".turn .step .step-outcome.ok").await,
        4,
        "every step succeeded"
    );
    assert_eq!(browser.count(".turn .step .step-outcome.failed").await, 0);

    // The panels.
    browser
        .wait_text(
            "#objective-text",
            "Plan a 5-day trip to Lisbon under 2,000 EUR",
        )
        .await;
    browser.wait_count("#todo-list li[data-todo-id]", 4).await;
    browser
        .wait_text(
            "#todo-list li[data-depth=\"1\"] .todo-text",
            "Compare fares",
        )
        .await;
    browser.wait_text("#document-title", "Lisbon trip").await;
    browser.wait_text("#document-view h2", "Budget").await;
    browser.wait_text("#document-view strong", "Total").await;
    browser
        .wait_count("#artifact-list li[data-artifact-id]", 1)
        .await;
    browser
        .wait_for("#artifact-list li[data-artifact-id] img")
        .await;
    browser
        .wait_for("#artifact-list li[data-artifact-id] a.chart-download")
        .await;
    browser.wait_for(".turn .chart img").await;
    browser.wait_for(".turn .chart a.chart-download").await;
    browser
        .wait_js(
            "the chart images to load",
            "const imgs = [...document.querySelectorAll('.turn .chart img, #artifact-list img')];
         return imgs.length >= 2 && imgs.every((i) => i.complete && i.naturalWidth > 0)
           ? true : {ok: false, imgs: imgs.map((i) => [i.src, i.complete, i.naturalWidth])};",
            vec![],
        )
        .await;

    // The same, from the server's side.
    let ws = server.workspace(&thread).await;
    assert_eq!(
        ws["objective"],
        json!("Plan a 5-day trip to Lisbon under 2,000 EUR")
    );
    assert_eq!(ws["todos"].as_array().unwrap().len(), 4);
    assert!(
        ws["document"]["content"]
            .as_str()
            .unwrap()
            .contains("## Budget")
    );
    assert_eq!(ws["artifacts"].as_array().unwrap().len(), 1);

    // A reload draws the same turn from the stored conversation.
    browser.refresh().await;
    browser.wait_ready().await;
    browser
        .wait_text(".turn .msg.assistant .msg-content", "Your trip is planned")
        .await;
    browser.wait_count(".turn details.reasoning .step", 4).await;
    browser.wait_for(".turn .chart img").await;
    browser.wait_text("#document-view h2", "Budget").await;
    browser.assert_no_js_errors().await;
}
on_both_engines!(chat_turn_streams_answer_trace_and_panels);

// ---------------------------------------------------------------------------------------------
// (b) a preference locked in the UI survives the agent's attempts to change it
// ---------------------------------------------------------------------------------------------

async fn locked_preference_survives_the_agent(engine: Engine) {
    let script = json!({"responses": [
        {"text": "I will drop the budget.", "tool_calls": [
            {"name": "remove_preferences", "arguments": {
                "indices": [1], "action_and_reasoning": "The user wants the budget gone."}},
            {"name": "update_preferences", "arguments": {
                "updates": [{"index": 1, "title": "Budget under 5,000 EUR"}],
                "action_and_reasoning": "Raising the budget instead."}}
        ]},
        {"text": "That preference is locked; unlock it if you want me to change it."}
    ]});
    let server = Server::start(ServerOptions::new(engine).replay(script)).await;
    let thread = server.create_thread("prefs", "Preferences").await;
    let browser = Browser::start().await;
    open_thread(&browser, &server, &thread).await;

    // Add it through the form, as a hard constraint.
    browser
        .type_into("#pref-title", "Budget under 2,000 EUR")
        .await;
    browser.type_into("#pref-subtitle", "for two people").await;
    browser
        .find("#pref-kind")
        .await
        .select_by_value("hard")
        .await
        .expect("choose hard");
    browser.click("#pref-add").await;
    let li = "#preference-list li[data-preference-id]";
    browser
        .wait_text(&format!("{li} .pref-title"), "Budget under 2,000 EUR")
        .await;
    browser
        .wait_text(&format!("{li} .pref-subtitle"), "for two people")
        .await;
    browser
        .wait_text_content(&format!("{li} .pref-kind"), "hard")
        .await;
    browser
        .wait_attr(&format!("{li} button.pref-lock"), "aria-pressed", "false")
        .await;

    // Lock it.
    browser.click(&format!("{li} button.pref-lock")).await;
    browser
        .wait_attr(&format!("{li} button.pref-lock"), "aria-pressed", "true")
        .await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let prefs = server.workspace(&thread).await["preferences"].clone();
        if prefs[0]["locked"] == json!(true) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the lock did not reach the server: {prefs}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }

    // The agent tries to remove it and to change it.
    send_chat(&browser, "Forget the budget.").await;
    browser
        .wait_text(
            ".turn .msg.assistant .msg-content",
            "That preference is locked",
        )
        .await;
    browser.wait_count(".turn .step", 2).await;
    let tools = browser.texts(".turn .step .step-tool").await;
    assert!(
        tools[0].contains("remove_preferences") && tools[1].contains("update_preferences"),
        "{tools:?}"
    );
    // Each step says the preference was skipped because it is locked, and is not marked as a
    // plain success (docs/UI.md: `.step-outcome` is `ok` or `failed`; the UI also has
    // `partial` for a call that skipped some of its targets).
    let steps = browser.texts(".turn .step").await;
    for step in &steps {
        assert!(
            step.contains("skipped") && step.contains("locked"),
            "each step should report the skipped, locked preference: {steps:?}"
        );
    }
    let classes = browser
        .js(
            "return [...document.querySelectorAll('.turn .step .step-outcome')].map((e) => e.className);",
            vec![],
        )
        .await;
    for class in classes.as_array().unwrap() {
        let class = class.as_str().unwrap();
        assert!(
            !class.split(' ').any(|c| c == "ok"),
            "a skipped attempt is marked as a plain success: {classes}"
        );
    }

    // Still there and still locked, in the page and on the server.
    browser.wait_count(li, 1).await;
    browser
        .wait_text(&format!("{li} .pref-title"), "Budget under 2,000 EUR")
        .await;
    browser
        .wait_attr(&format!("{li} button.pref-lock"), "aria-pressed", "true")
        .await;
    let prefs = server.workspace(&thread).await["preferences"].clone();
    assert_eq!(prefs.as_array().unwrap().len(), 1, "{prefs}");
    assert_eq!(prefs[0]["title"], json!("Budget under 2,000 EUR"));
    assert_eq!(prefs[0]["kind"], json!("hard"));
    assert_eq!(prefs[0]["locked"], json!(true));
    browser.assert_no_js_errors().await;
}
on_both_engines!(locked_preference_survives_the_agent);

// ---------------------------------------------------------------------------------------------
// (c) editing the document while the agent writes: the conflict dialog loses nothing
// ---------------------------------------------------------------------------------------------

/// Opens the editor, types `mine` over the text, lets the agent append `theirs` meanwhile,
/// and saves: returns once the conflict dialog shows both versions.
async fn edit_against_the_agent(
    browser: &Browser,
    server: &Server,
    thread: &str,
    mine: &str,
    theirs: &str,
) {
    browser.click("#document-edit").await;
    browser.wait_visible("#document-editor").await;
    browser.type_into("#document-editor", mine).await;
    server
        .tool_ok(thread, "append_to_document", json!({"text": theirs}))
        .await;
    browser.wait_visible("#document-notice").await;
    let editor = browser.text("#document-editor").await.unwrap_or_default();
    assert_eq!(
        editor, mine,
        "the agent's change must not overwrite the editor"
    );
    browser.click("#document-save").await;
    browser.wait_visible("#conflict-dialog").await;
    browser.wait_text("#conflict-mine", mine.trim()).await;
    browser.wait_text("#conflict-theirs", theirs.trim()).await;
}

async fn document_conflict_keeps_every_text(engine: Engine) {
    let server = Server::start(ServerOptions::new(engine)).await;
    let thread = server.create_thread("doc", "Doc").await;
    server
        .set_document(&thread, "Trip notes", "Intro line.")
        .await;
    let browser = Browser::start().await;
    open_thread(&browser, &server, &thread).await;
    browser.wait_text("#document-view", "Intro line.").await;
    browser.wait_text("#document-title", "Trip notes").await;

    // Merge by hand: both texts go into the editor; saving keeps both.
    let mine = "Intro line.\n\nMINE one: the user's paragraph.";
    edit_against_the_agent(
        &browser,
        &server,
        &thread,
        mine,
        "\n\nTHEIRS one: the agent's paragraph.",
    )
    .await;
    browser.click("#conflict-merge").await;
    browser.wait_hidden("#conflict-dialog").await;
    browser.wait_text("#document-editor", "MINE one").await;
    browser.wait_text("#document-editor", "THEIRS one").await;
    browser.click("#document-save").await;
    browser.wait_hidden("#document-editor").await;
    browser
        .wait_text("#document-view", "MINE one: the user's paragraph.")
        .await;
    browser
        .wait_text("#document-view", "THEIRS one: the agent's paragraph.")
        .await;
    let content = server.document(&thread).await["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        content.contains("Intro line.")
            && content.contains("MINE one: the user's paragraph.")
            && content.contains("THEIRS one: the agent's paragraph."),
        "merge lost text: {content:?}"
    );

    // Keep mine: the user's version is saved as typed.
    let mine = format!("{content}\n\nMINE two: another user paragraph.");
    edit_against_the_agent(
        &browser,
        &server,
        &thread,
        &mine,
        "\n\nTHEIRS two: the agent again.",
    )
    .await;
    browser.click("#conflict-keep-mine").await;
    browser.wait_hidden("#conflict-dialog").await;
    browser.wait_text("#document-view", "MINE two").await;
    let saved = server.document(&thread).await["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        saved.contains("MINE two: another user paragraph."),
        "keep-mine lost the user's text: {saved:?}"
    );
    assert!(
        saved.contains("MINE one") && saved.contains("THEIRS one"),
        "{saved:?}"
    );

    // Take theirs: the server's version stays, and the page shows it.
    let before = saved.clone();
    edit_against_the_agent(
        &browser,
        &server,
        &thread,
        "MINE three: thrown away.",
        "\n\nTHEIRS three: kept.",
    )
    .await;
    browser.click("#conflict-take-theirs").await;
    browser.wait_hidden("#conflict-dialog").await;
    browser
        .wait_text("#document-view", "THEIRS three: kept.")
        .await;
    let now = server.document(&thread).await["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(now, format!("{before}\n\nTHEIRS three: kept."));
    browser.assert_no_js_errors().await;
}
on_both_engines!(document_conflict_keeps_every_text);

// ---------------------------------------------------------------------------------------------
// (d) hostile Markdown and text render inert
// ---------------------------------------------------------------------------------------------

const PAYLOAD: &str = "# Heading\n\n\
<script>window.__pwned = 'script';</script>\n\n\
<img src=\"x\" onerror=\"window.__pwned = 'img'\">\n\n\
<img src=y onerror=alert(1)>\n\n\
[click me](javascript:window.__pwned='link')\n\n\
<a href=\"javascript:window.__pwned='a'\">raw link</a>\n\n\
<a href=\"JaVaScRiPt:window.__pwned='mixed'\">mixed link</a>\n\n\
<svg><script>window.__pwned='svg'</script></svg>\n\n\
<iframe src=\"javascript:parent.__pwned='iframe'\"></iframe>\n\n\
<div onmouseover=\"window.__pwned='hover'\">hover me</div>\n\n\
<form action=\"javascript:window.__pwned='form'\"><button>go</button></form>\n\n\
<style>body { display: none }</style>\n\n\
The end.\n";

const INLINE: &str = "<img src=x onerror=\"window.__pwned='inline'\"><script>window.__pwned='inline-script'</script>";

async fn assert_inert(browser: &Browser, context: &str) {
    let report = browser
        .js(
            "const all = [...document.querySelectorAll('*')];
             return {
               pwned: window.__pwned === undefined ? null : String(window.__pwned),
               on_attrs: all.filter((e) => [...e.attributes].some((a) => a.name.toLowerCase().startsWith('on')))
                            .map((e) => e.outerHTML.slice(0, 200)),
               scripts: [...document.body.querySelectorAll('script')].map((e) => e.outerHTML.slice(0, 200)),
               js_links: [...document.querySelectorAll('[href],[src],[action],[formaction]')]
                 .filter((e) => ['href', 'src', 'action', 'formaction'].some((n) => (e.getAttribute(n) || '').replace(/[\\s\\u0000-\\u001f]/g, '').toLowerCase().startsWith('javascript:')))
                 .map((e) => e.outerHTML.slice(0, 200)),
               frames: document.querySelectorAll('iframe, object, embed').length,
               styles: [...document.body.querySelectorAll('style')].length,
               body_shown: getComputedStyle(document.body).display !== 'none',
             };",
            vec![],
        )
        .await;
    assert_eq!(
        report["pwned"],
        json!(null),
        "{context}: a payload ran: {report}"
    );
    assert_eq!(
        report["on_attrs"],
        json!([]),
        "{context}: elements with on* attributes: {report}"
    );
    assert_eq!(
        report["scripts"],
        json!([]),
        "{context}: script elements in the page: {report}"
    );
    assert_eq!(
        report["js_links"],
        json!([]),
        "{context}: javascript: URLs: {report}"
    );
    assert_eq!(report["frames"], json!(0), "{context}: frames: {report}");
    assert_eq!(
        report["styles"],
        json!(0),
        "{context}: style elements from content: {report}"
    );
    assert_eq!(
        report["body_shown"],
        json!(true),
        "{context}: injected CSS hid the page"
    );
    let alerts = browser.alerts().await;
    assert!(
        alerts.is_empty(),
        "{context}: dialogs were opened: {alerts:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_content_renders_inert() {
    let script = json!({"responses": [{"text": PAYLOAD}]});
    let server = Server::start(ServerOptions::new(Engine::Sqlite).replay(script)).await;
    let thread = server.create_thread("xss", INLINE).await;
    server.set_document(&thread, INLINE, PAYLOAD).await;
    server.set_objective(&thread, INLINE).await;
    server
        .add_preference(
            &thread,
            json!({"title": INLINE, "subtitle": INLINE, "kind": "hard"}),
        )
        .await;
    server.add_todo(&thread, INLINE).await;
    server
        .tool_ok(
            &thread,
            "chart_generator",
            json!({
                "chart_type": "pie", "title": INLINE, "description": INLINE,
                "data": {"labels": [INLINE, "b"], "series": [{"name": INLINE, "values": [1, 2]}]}
            }),
        )
        .await;

    let browser = Browser::start().await;
    open_thread(&browser, &server, &thread).await;
    browser.wait_text("#document-view h1", "Heading").await;
    browser.wait_text("#document-view", "The end.").await;
    browser.wait_text("#objective-text", "<img src=x").await;
    browser
        .wait_text("#preference-list .pref-title", "<img src=x")
        .await;
    browser
        .wait_text("#todo-list .todo-text", "<img src=x")
        .await;
    browser
        .wait_count("#artifact-list li[data-artifact-id]", 1)
        .await;
    browser
        .wait_text("#thread-list li[data-thread-id]", "<img src=x")
        .await;

    send_chat(&browser, INLINE).await;
    browser.wait_text(".turn .msg.user", "<img src=x").await;
    browser
        .wait_text(".turn .msg.assistant .msg-content", "The end.")
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    // The harmless parts are shown; only the active parts are gone.
    for text in ["click me", "raw link", "hover me", "The end."] {
        browser.wait_text("#document-view", text).await;
        browser
            .wait_text(".turn .msg.assistant .msg-content", text)
            .await;
    }
    assert_inert(&browser, "after the turn").await;

    // Clicking the links does nothing either.
    let url = browser.current_url().await;
    for link in browser
        .find_all("#document-view a, .turn .msg-content a")
        .await
    {
        let _ = link.click().await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(browser.current_url().await, url, "a link navigated away");
    assert_inert(&browser, "after clicking the links").await;

    // And after a reload, drawn from what the server stored.
    browser.refresh().await;
    browser.wait_ready().await;
    browser.wait_text("#document-view", "The end.").await;
    browser
        .wait_text(".turn .msg.assistant .msg-content", "The end.")
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_inert(&browser, "after a reload").await;
    browser.assert_no_js_errors().await;
}

// ---------------------------------------------------------------------------------------------
// (e) two windows on one thread stay in step
// ---------------------------------------------------------------------------------------------

async fn two_windows_stay_in_step(engine: Engine) {
    let server = Server::start(ServerOptions::new(engine)).await;
    let thread = server.create_thread("shared", "Shared").await;
    server
        .tool_ok(
            &thread,
            "add_todos",
            json!({"steps": [{"text": "Pick dates"}]}),
        )
        .await;
    let browser = Browser::start().await;
    open_thread(&browser, &server, &thread).await;
    let first = browser.window().await;
    browser.open_window().await;
    open_thread(&browser, &server, &thread).await;
    let second = browser.window().await;
    browser.wait_count("#todo-list li[data-todo-id]", 1).await;

    // Window 1: add a step.
    browser.switch_to(&first).await;
    browser.type_into("#todo-input", "Book the hotel").await;
    browser.click("#todo-add").await;
    browser.wait_count("#todo-list li[data-todo-id]", 2).await;
    browser.switch_to(&second).await;
    browser
        .wait_text("#todo-list .todo-text", "Book the hotel")
        .await;

    // Window 1: tick it.
    browser.switch_to(&first).await;
    let todo_id = browser
        .js("const li = [...document.querySelectorAll('#todo-list li[data-todo-id]')].find((l) => l.textContent.includes('Book the hotel'));
             return li ? li.dataset.todoId : null;", vec![])
        .await;
    let todo_id = todo_id
        .as_str()
        .expect("the new step has a data-todo-id")
        .to_string();
    let checkbox =
        format!("#todo-list li[data-todo-id=\"{todo_id}\"] input.todo-done[type=checkbox]");
    browser.click(&checkbox).await;
    browser.switch_to(&second).await;
    browser
        .wait_js(
            "the step to be ticked in window 2",
            "const c = document.querySelector(arguments[0]); return c && c.checked;",
            vec![json!(checkbox)],
        )
        .await;

    // Window 1: edit the objective.
    browser.switch_to(&first).await;
    browser.click("#objective-edit").await;
    browser
        .type_into(
            "#objective-input",
            &format!("Two travellers, one plan{}", browser::ENTER),
        )
        .await;
    browser
        .wait_text("#objective-text", "Two travellers, one plan")
        .await;
    browser.switch_to(&second).await;
    browser
        .wait_text("#objective-text", "Two travellers, one plan")
        .await;

    // Over the API (user path): both windows.
    server.add_todo(&thread, "Pack the bags").await;
    browser
        .wait_text("#todo-list .todo-text", "Pack the bags")
        .await;
    browser.switch_to(&first).await;
    browser
        .wait_text("#todo-list .todo-text", "Pack the bags")
        .await;

    // The agent changes the plan and the document: the panels flash, in both windows.
    browser.watch_flashes().await;
    browser.switch_to(&second).await;
    browser.watch_flashes().await;
    server
        .tool_ok(
            &thread,
            "add_todos",
            json!({"steps": [{"text": "Agent step"}]}),
        )
        .await;
    server
        .tool_ok(
            &thread,
            "update_document",
            json!({"title": "Notes", "content": "Agent wrote this."}),
        )
        .await;
    browser
        .wait_text("#todo-list .todo-text", "Agent step")
        .await;
    browser
        .wait_text("#document-view", "Agent wrote this.")
        .await;
    browser.wait_flash("plan").await;
    browser.wait_flash("document").await;
    browser.switch_to(&first).await;
    browser
        .wait_text("#todo-list .todo-text", "Agent step")
        .await;
    browser.wait_flash("plan").await;
    browser.wait_flash("document").await;

    let ws = server.workspace(&thread).await;
    assert_eq!(ws["objective"], json!("Two travellers, one plan"));
    let todos = ws["todos"].as_array().unwrap();
    assert_eq!(todos.len(), 4, "{ws}");
    assert!(
        todos
            .iter()
            .any(|t| t["text"] == json!("Book the hotel") && t["done"] == json!(true)),
        "{ws}"
    );
    browser.assert_no_js_errors().await;
    browser.switch_to(&second).await;
    browser.assert_no_js_errors().await;
}
on_both_engines!(two_windows_stay_in_step);

// ---------------------------------------------------------------------------------------------
// (f) layout at desktop and phone widths; threads
// ---------------------------------------------------------------------------------------------

/// Fills a thread the way a session would leave it.
async fn realistic_workspace(server: &Server, thread: &str) {
    server
        .add_preference(thread, json!({"title": "Budget under 2,000 EUR", "subtitle": "flights and hotel for two", "kind": "hard", "locked": true}))
        .await;
    server
        .add_preference(
            thread,
            json!({"title": "Direct flights", "subtitle": "no overnight layovers", "kind": "soft"}),
        )
        .await;
    server
        .add_preference(
            thread,
            json!({"title": "Walkable neighbourhood", "kind": "soft"}),
        )
        .await;
    server
        .tool_ok(
            thread,
            "set_objective",
            json!({"objective": "Plan a 5-day trip to Lisbon in May for two, under 2,000 EUR"}),
        )
        .await;
    server
        .tool_ok(thread, "add_todos", json!({"steps": [
            {"text": "Pick dates"}, {"text": "Book flights"}, {"text": "Compare TAP and easyJet fares", "depth": 1},
            {"text": "Check baggage rules", "depth": 1}, {"text": "Find a hotel in Alfama or Baixa"},
            {"text": "Plan day trips"}, {"text": "Sintra", "depth": 1}, {"text": "Cascais", "depth": 1}
        ]}))
        .await;
    server
        .tool_ok(thread, "toggle_todos", json!({"indices": [1, 3]}))
        .await;
    server
        .tool_ok(thread, "update_document", json!({"title": "Lisbon, 12–16 May", "content":
            "## Summary\n\nFive days in Lisbon for two, flying direct from Berlin, staying in Alfama.\n\n\
             ## Budget\n\n| item | cost |\n| --- | ---: |\n| Flights | 420 EUR |\n| Hotel (4 nights) | 880 EUR |\n| Food | 350 EUR |\n| Trips | 120 EUR |\n| **Total** | **1,770 EUR** |\n\n\
             ## Days\n\n1. Arrive, walk Alfama, dinner at a tasca\n2. Belém: tower, monastery, pastéis\n3. Sintra day trip\n4. LX Factory and the river front\n5. Fly home\n\n\
             > Book Sintra tickets online: the Pena palace sells out.\n"}))
        .await;
    server
        .tool_ok(thread, "chart_generator", json!({
            "chart_type": "bar", "title": "Budget by item", "y_axis_title": "EUR",
            "data": {"labels": ["Flights", "Hotel", "Food", "Trips"], "series": [{"name": "EUR", "values": [420, 880, 350, 120]}]}
        }))
        .await;
    server
        .tool_ok(
            thread,
            "chart_generator",
            json!({
                "chart_type": "line", "title": "Fares over the week", "y_axis_title": "EUR",
                "data": {"labels": ["Mon", "Tue", "Wed", "Thu", "Fri"],
                         "series": [{"name": "TAP", "values": [230, 210, 190, 205, 240]},
                                    {"name": "easyJet", "values": [160, 150, 175, 180, 220]}]}
            }),
        )
        .await;
}

/// The panels of docs/UI.md.
const PANELS: [&str; 8] = [
    "#thread-list",
    "#preferences",
    "#objective",
    "#document",
    "#plan",
    "#messages",
    "#chat-input",
    "#artifacts",
];

const RECTS_JS: &str = "return arguments[0].map((s) => {
  const e = document.querySelector(s);
  if (!e) return {sel: s, missing: true};
  const r = e.getBoundingClientRect();
  const st = getComputedStyle(e);
  return {sel: s, left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height,
          shown: st.display !== 'none' && st.visibility !== 'hidden' && r.width > 0 && r.height > 0};
});";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn layout_fits_desktop_and_stacks_on_a_phone() {
    let server = Server::start(ServerOptions::new(Engine::Sqlite)).await;
    let thread = server.create_thread("layout", "Lisbon in May").await;
    realistic_workspace(&server, &thread).await;
    let browser = Browser::start().await;
    browser.set_viewport(1280, 800).await;
    open_thread(&browser, &server, &thread).await;
    browser
        .wait_count("#artifact-list li[data-artifact-id]", 2)
        .await;

    let rects = browser.js(RECTS_JS, vec![json!(PANELS)]).await;
    let mut problems = Vec::new();
    for r in rects.as_array().unwrap() {
        let sel = r["sel"].as_str().unwrap();
        if r["missing"] == json!(true) {
            problems.push(format!("{sel}: missing"));
            continue;
        }
        let f = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
        if r["shown"] != json!(true) {
            problems.push(format!("{sel}: not shown ({r})"));
        } else if f("left") < -0.5 || f("top") < -0.5 || f("right") > 1280.5 || f("bottom") > 800.5
        {
            problems.push(format!("{sel}: outside the 1280×800 viewport ({r})"));
        }
    }
    let overflow = browser
        .js(
            "return [document.documentElement.scrollWidth, document.documentElement.scrollHeight];",
            vec![],
        )
        .await;
    if !problems.is_empty() {
        browser
            .fail(&format!(
                "at 1280×800:\n{}\npage size: {overflow}",
                problems.join("\n")
            ))
            .await;
    }

    // Phone: one column, nothing wider than the screen.
    browser.set_viewport(390, 844).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    browser
        .screenshot(&browser::ui_target_dir().join("phone.png"))
        .await;
    let width = browser
        .js(
            "return Math.max(document.documentElement.scrollWidth, document.body.scrollWidth);",
            vec![],
        )
        .await;
    assert!(
        width.as_f64().unwrap() <= 390.5,
        "horizontal overflow at 390 px: the page is {width} px wide"
    );
    let main = [
        "#preferences",
        "#objective",
        "#document",
        "#plan",
        "#messages",
        "#artifacts",
    ];
    let rects = browser.js(RECTS_JS, vec![json!(main)]).await;
    let rects: Vec<&serde_json::Value> = rects.as_array().unwrap().iter().collect();
    for r in &rects {
        assert!(
            r["shown"] == json!(true),
            "at 390 px every panel but the thread list is shown: {r}"
        );
        assert!(
            r["left"].as_f64().unwrap() >= -0.5 && r["right"].as_f64().unwrap() <= 390.5,
            "at 390 px a panel is wider than the screen: {r}"
        );
    }
    for (i, a) in rects.iter().enumerate() {
        for b in &rects[i + 1..] {
            let overlap = a["top"].as_f64().unwrap() < b["bottom"].as_f64().unwrap() - 0.5
                && b["top"].as_f64().unwrap() < a["bottom"].as_f64().unwrap() - 0.5;
            assert!(
                !overlap,
                "at 390 px panels should stack, but these share rows:\n{a}\n{b}"
            );
        }
    }
    browser.assert_no_js_errors().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn threads_create_rename_switch_delete_and_deep_link() {
    let server = Server::start(ServerOptions::new(Engine::Sqlite)).await;
    server.create_thread("alpha", "Alpha trip").await;
    server.set_objective("alpha", "Alpha objective").await;
    server.create_thread("beta", "Beta trip").await;
    server.set_objective("beta", "Beta objective").await;
    let browser = Browser::start().await;

    // Deep link.
    open_thread(&browser, &server, "alpha").await;
    browser
        .wait_attr(
            "#thread-list li[aria-current=\"page\"]",
            "data-thread-id",
            "alpha",
        )
        .await;
    browser
        .wait_text("#objective-text", "Alpha objective")
        .await;
    browser
        .wait_text("#thread-list li[data-thread-id=\"beta\"]", "Beta trip")
        .await;

    // Switch.
    browser
        .click("#thread-list li[data-thread-id=\"beta\"] a.thread-link")
        .await;
    browser
        .wait_attr(
            "#thread-list li[aria-current=\"page\"]",
            "data-thread-id",
            "beta",
        )
        .await;
    browser.wait_text("#objective-text", "Beta objective").await;
    browser.wait_ready().await;
    assert!(
        browser.current_url().await.ends_with("/t/beta"),
        "{}",
        browser.current_url().await
    );
    assert_eq!(
        browser
            .count("#thread-list li[aria-current=\"page\"]")
            .await,
        1
    );

    // Rename: Enter saves, Escape cancels.
    browser
        .click("#thread-list li[data-thread-id=\"beta\"] button[data-action=\"rename\"]")
        .await;
    browser
        .type_into(
            "#thread-list .thread-rename-input",
            &format!("Beta renamed{}", browser::ENTER),
        )
        .await;
    browser
        .wait_text("#thread-list li[data-thread-id=\"beta\"]", "Beta renamed")
        .await;
    assert_eq!(
        server.get("/api/threads/beta").await["title"],
        json!("Beta renamed")
    );
    browser
        .click("#thread-list li[data-thread-id=\"beta\"] button[data-action=\"rename\"]")
        .await;
    browser
        .type_into(
            "#thread-list .thread-rename-input",
            &format!("Not this{}", browser::ESCAPE),
        )
        .await;
    browser
        .wait_hidden("#thread-list .thread-rename-input")
        .await;
    browser
        .wait_text("#thread-list li[data-thread-id=\"beta\"]", "Beta renamed")
        .await;
    assert_eq!(
        server.get("/api/threads/beta").await["title"],
        json!("Beta renamed")
    );

    // Create.
    let before = browser.count("#thread-list li[data-thread-id]").await;
    browser.click("#new-thread").await;
    browser
        .wait_count("#thread-list li[data-thread-id]", before + 1)
        .await;
    let created = browser
        .wait_js(
            "the new thread to be the open one",
            "const li = document.querySelector('#thread-list li[aria-current=\"page\"]');
             const id = li && li.dataset.threadId;
             return id && id !== 'alpha' && id !== 'beta' ? id : {ok: false, current: id};",
            vec![],
        )
        .await;
    let created = created.as_str().unwrap().to_string();
    browser.wait_ready().await;
    assert!(
        browser
            .current_url()
            .await
            .ends_with(&format!("/t/{created}")),
        "{}",
        browser.current_url().await
    );
    server.get(&format!("/api/threads/{created}")).await;
    // A new thread opens with its name field focused: name it.
    browser
        .type_into(
            "#thread-list .thread-rename-input",
            &format!("Gamma plans{}", browser::ENTER),
        )
        .await;
    browser
        .wait_text(
            &format!("#thread-list li[data-thread-id=\"{created}\"]"),
            "Gamma plans",
        )
        .await;
    assert_eq!(
        server.get(&format!("/api/threads/{created}")).await["title"],
        json!("Gamma plans")
    );

    // Delete: Cancel keeps it, OK removes it.
    let alpha = "#thread-list li[data-thread-id=\"alpha\"]";
    browser
        .click(&format!("{alpha} button[data-action=\"delete\"]"))
        .await;
    browser.wait_visible("#confirm-dialog").await;
    browser.click("#confirm-cancel").await;
    browser.wait_hidden("#confirm-dialog").await;
    assert_eq!(browser.count(alpha).await, 1);
    server.get("/api/threads/alpha").await;
    browser
        .click(&format!("{alpha} button[data-action=\"delete\"]"))
        .await;
    browser.wait_visible("#confirm-dialog").await;
    browser.click("#confirm-ok").await;
    browser.wait_count(alpha, 0).await;
    let (status, _) = server
        .request(reqwest::Method::GET, "/api/threads/alpha", None)
        .await;
    assert_eq!(status, 404, "the deleted thread is gone from the server");

    // A deep link to a thread opened fresh.
    browser.goto(&server.url("/t/beta")).await;
    browser.wait_ready().await;
    browser
        .wait_attr(
            "#thread-list li[aria-current=\"page\"]",
            "data-thread-id",
            "beta",
        )
        .await;
    browser.wait_text("#objective-text", "Beta objective").await;
    browser.assert_no_js_errors().await;
}

// ---------------------------------------------------------------------------------------------
// Editing each panel in place (the rest of docs/UI.md's controls)
// ---------------------------------------------------------------------------------------------

/// Clicks `#confirm-ok` if the page asks for a confirmation within a second.
async fn confirm_if_asked(browser: &Browser) {
    for _ in 0..10 {
        if browser.is_visible("#confirm-dialog").await {
            browser.click("#confirm-ok").await;
            browser.wait_hidden("#confirm-dialog").await;
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// The `data-todo-id` of the step whose text contains `text`.
async fn todo_id(browser: &Browser, text: &str) -> String {
    browser
        .wait_js(
            &format!("a step containing {text:?}"),
            "const li = [...document.querySelectorAll('#todo-list li[data-todo-id]')]
               .find((l) => l.querySelector('.todo-text') && l.querySelector('.todo-text').textContent.includes(arguments[0]));
             return li ? li.dataset.todoId : null;",
            vec![json!(text)],
        )
        .await
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panels_edit_in_place() {
    let server = Server::start(ServerOptions::new(Engine::Sqlite)).await;
    let thread = server.create_thread("edits", "Edits").await;
    server
        .tool_ok(
            &thread,
            "add_todos",
            json!({"steps": [{"text": "Pick dates"}, {"text": "Book flights"},
                             {"text": "Compare fares", "depth": 1}, {"text": "Pack"}]}),
        )
        .await;
    server
        .add_preference(
            &thread,
            json!({"title": "Window seat", "kind": "soft", "locked": true}),
        )
        .await;
    server.set_objective(&thread, "Original objective").await;
    let browser = Browser::start().await;
    open_thread(&browser, &server, &thread).await;
    browser.wait_count("#todo-list li[data-todo-id]", 4).await;

    // A step: Enter saves, Escape cancels.
    let id = todo_id(&browser, "Pick dates").await;
    let li = format!("#todo-list li[data-todo-id=\"{id}\"]");
    browser
        .click(&format!("{li} button[data-action=\"edit\"]"))
        .await;
    browser
        .type_into(
            "#todo-list .todo-edit-input",
            &format!("Pick dates in May{}", browser::ENTER),
        )
        .await;
    browser
        .wait_text(&format!("{li} .todo-text"), "Pick dates in May")
        .await;
    browser
        .click(&format!("{li} button[data-action=\"edit\"]"))
        .await;
    browser
        .type_into(
            "#todo-list .todo-edit-input",
            &format!("Not this{}", browser::ESCAPE),
        )
        .await;
    browser.wait_hidden("#todo-list .todo-edit-input").await;
    browser
        .wait_text(&format!("{li} .todo-text"), "Pick dates in May")
        .await;

    // Deleting a step deletes its sub-steps.
    let id = todo_id(&browser, "Book flights").await;
    browser
        .click(&format!(
            "#todo-list li[data-todo-id=\"{id}\"] button[data-action=\"delete\"]"
        ))
        .await;
    confirm_if_asked(&browser).await;
    browser.wait_count("#todo-list li[data-todo-id]", 2).await;
    let todos = server.workspace(&thread).await["todos"].clone();
    let texts: Vec<&str> = todos
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["Pick dates in May", "Pack"]);

    // The objective: Escape cancels, Enter saves.
    browser.click("#objective-edit").await;
    browser
        .type_into("#objective-input", &format!("Not this{}", browser::ESCAPE))
        .await;
    browser.wait_hidden("#objective-input").await;
    browser
        .wait_text("#objective-text", "Original objective")
        .await;
    assert_eq!(
        server.workspace(&thread).await["objective"],
        json!("Original objective")
    );
    browser.click("#objective-edit").await;
    browser
        .type_into(
            "#objective-input",
            &format!("Edited objective{}", browser::ENTER),
        )
        .await;
    browser
        .wait_text("#objective-text", "Edited objective")
        .await;
    assert_eq!(
        server.workspace(&thread).await["objective"],
        json!("Edited objective")
    );

    // A preference: unlock, then delete.
    let pref = "#preference-list li[data-preference-id]";
    browser
        .wait_attr(&format!("{pref} button.pref-lock"), "aria-pressed", "true")
        .await;
    browser.click(&format!("{pref} button.pref-lock")).await;
    browser
        .wait_attr(&format!("{pref} button.pref-lock"), "aria-pressed", "false")
        .await;
    assert_eq!(
        server.workspace(&thread).await["preferences"][0]["locked"],
        json!(false)
    );
    browser
        .click(&format!("{pref} button[data-action=\"delete\"]"))
        .await;
    confirm_if_asked(&browser).await;
    browser.wait_count(pref, 0).await;
    assert_eq!(server.workspace(&thread).await["preferences"], json!([]));

    // The document: written from nothing, Cancel drops an edit, Save keeps one.
    assert_eq!(server.document(&thread).await["content"], json!(""));
    browser.click("#document-edit").await;
    browser
        .type_into(
            "#document-editor",
            "# Packing list\n\n- passports\n- adapters",
        )
        .await;
    browser.click("#document-save").await;
    browser.wait_hidden("#document-editor").await;
    browser.wait_text("#document-view h1", "Packing list").await;
    browser.wait_count("#document-view li", 2).await;
    assert_eq!(
        server.document(&thread).await["content"],
        json!("# Packing list\n\n- passports\n- adapters")
    );
    browser.click("#document-edit").await;
    browser.type_into("#document-editor", "Thrown away").await;
    browser.click("#document-cancel").await;
    browser.wait_hidden("#document-editor").await;
    browser.wait_text("#document-view h1", "Packing list").await;
    assert_eq!(
        server.document(&thread).await["content"],
        json!("# Packing list\n\n- passports\n- adapters")
    );
    browser.assert_no_js_errors().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_ends_a_running_turn() {
    let script = json!({"responses": [
        {"text": "This answer comes too late.", "delay_ms": 6000}
    ]});
    let server = Server::start(ServerOptions::new(Engine::Sqlite).replay(script)).await;
    let thread = server.create_thread("stop", "Stop").await;
    let browser = Browser::start().await;
    open_thread(&browser, &server, &thread).await;
    send_chat(&browser, "Take your time.").await;
    browser.wait_visible("#chat-stop").await;
    browser.click("#chat-stop").await;
    browser
        .wait_js_for(
            "the turn to end after Stop",
            "const s = document.querySelector('#chat-stop');
             const i = document.querySelector('#chat-input');
             const shown = s && !s.hidden && getComputedStyle(s).display !== 'none';
             return !shown && i && !i.disabled ? true : {ok: false, stop_shown: shown};",
            vec![],
            std::time::Duration::from_secs(4),
        )
        .await;
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    let answer = browser.texts(".turn .msg.assistant .msg-content").await;
    assert!(
        !answer.iter().any(|a| a.contains("comes too late")),
        "the stopped turn still answered: {answer:?}"
    );
    browser.assert_no_js_errors().await;
}

// ---------------------------------------------------------------------------------------------
// (g) a server with an API token
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_token_is_asked_once() {
    let token = "s3cret-token-for-the-ui";
    let server = Server::start(ServerOptions::new(Engine::Sqlite).token(token)).await;
    let thread = server.create_thread("guarded", "Guarded").await;
    server.set_objective(&thread, "Behind a token").await;
    server
        .tool_ok(
            &thread,
            "chart_generator",
            json!({
                "chart_type": "bar", "title": "Guarded chart",
                "data": {"labels": ["a", "b"], "series": [{"name": "n", "values": [1, 2]}]}
            }),
        )
        .await;
    let browser = Browser::start().await;
    browser.goto(&server.url(&format!("/t/{thread}"))).await;
    browser.wait_visible("#token-dialog").await;

    // A wrong token is refused and asked again.
    browser.type_into("#token-input", "wrong-token").await;
    browser.click("#token-submit").await;
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    browser.wait_visible("#token-dialog").await;
    browser.wait_visible("#token-input").await;
    assert_ne!(
        browser
            .js("return document.body.dataset.ready;", vec![])
            .await,
        json!("true"),
        "a wrong token must not load the thread"
    );

    browser.type_into("#token-input", token).await;
    browser.click("#token-submit").await;
    browser.wait_ready().await;
    browser.wait_hidden("#token-dialog").await;
    browser.wait_text("#objective-text", "Behind a token").await;
    browser
        .wait_attr("#connection-status", "data-state", "live")
        .await;
    assert_eq!(
        browser
            .js("return localStorage.getItem('haico.token');", vec![])
            .await,
        json!(token)
    );

    // The events stream works with the token: a change over the API shows up.
    server.set_objective(&thread, "Changed over the API").await;
    browser
        .wait_text("#objective-text", "Changed over the API")
        .await;

    // Charts load too (their images are requests of their own).
    browser.wait_js(
        "the chart image to load with the token",
        "const i = document.querySelector('#artifact-list img');
         return i && i.complete && i.naturalWidth > 0 ? true : {ok: false, src: i && i.src, complete: i && i.complete};",
        vec![],
    ).await;

    // A reload does not ask again.
    browser.refresh().await;
    browser.wait_ready().await;
    browser
        .wait_text("#objective-text", "Changed over the API")
        .await;
    assert!(
        !browser.is_visible("#token-dialog").await,
        "the token dialog came back after a reload"
    );
    browser.assert_no_js_errors().await;
}

// ---------------------------------------------------------------------------------------------
// (h) errors: no model configured; the server going away and coming back
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_model_chat_says_how_to_configure_one() {
    let server = Server::start(ServerOptions::new(Engine::Sqlite)).await;
    let thread = server.create_thread("nomodel", "No model").await;
    let browser = Browser::start().await;
    open_thread(&browser, &server, &thread).await;
    send_chat(&browser, "Hello?").await;
    browser.wait_text(".turn .msg.user", "Hello?").await;
    let where_ = ".msg.error, #banner[data-kind=\"model\"]";
    browser.wait_text(where_, "HAICO_LLM_PROVIDER").await;
    browser.wait_js(
        "the error to say that no model is configured",
        "return [...document.querySelectorAll(arguments[0])].some((e) => /no (language )?model/i.test(e.innerText));",
        vec![json!(where_)],
    ).await;
    // The page still works: the input is usable again.
    browser
        .wait_js(
            "the chat input to be enabled again",
            "const i = document.querySelector('#chat-input'); return i && !i.disabled;",
            vec![],
        )
        .await;
    browser.assert_no_js_errors().await;
}

async fn offline_then_reconnects_after_a_restart(engine: Engine) {
    let mut server = Server::start(ServerOptions::new(engine)).await;
    let thread = server.create_thread("flaky", "Flaky").await;
    server.set_objective(&thread, "Before the restart").await;
    let browser = Browser::start().await;
    open_thread(&browser, &server, &thread).await;
    browser
        .wait_text("#objective-text", "Before the restart")
        .await;

    server.kill();
    browser
        .wait_js_for(
            "#connection-status to leave `live`",
            "const s = document.querySelector('#connection-status').dataset.state; return s !== 'live' ? s : {ok: false, state: s};",
            vec![],
            std::time::Duration::from_secs(20),
        )
        .await;
    browser
        .wait_js_for(
            "#connection-status[data-state=offline] and the offline banner",
            "const s = document.querySelector('#connection-status').dataset.state;
             const b = document.querySelector('#banner');
             const shown = b && !b.hidden && getComputedStyle(b).display !== 'none';
             return s === 'offline' && shown && b.dataset.kind === 'offline' ? true : {ok: false, state: s, banner: b && [b.dataset.kind, shown, b.innerText]};",
            vec![],
            std::time::Duration::from_secs(45),
        )
        .await;

    server.restart().await;
    browser
        .wait_js_for(
            "#connection-status[data-state=live] after the restart",
            "const s = document.querySelector('#connection-status').dataset.state; return s === 'live' ? true : {ok: false, state: s};",
            vec![],
            std::time::Duration::from_secs(45),
        )
        .await;
    server.set_objective(&thread, "After the restart").await;
    browser
        .wait_text("#objective-text", "After the restart")
        .await;
    browser.wait_js(
        "the offline banner to go away",
        "const b = document.querySelector('#banner');
         return !b || b.hidden || getComputedStyle(b).display === 'none' || b.dataset.kind !== 'offline' ? true : {ok: false, banner: b.innerText};",
        vec![],
    ).await;
    browser.assert_no_js_errors().await;
}
on_both_engines!(offline_then_reconnects_after_a_restart);

// ---------------------------------------------------------------------------------------------
// (i) the main screen, for docs/screenshot.png (scripts/screenshot.sh)
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn screenshot_of_the_main_screen() {
    let script = json!({"responses": [
        {"text": "", "tool_calls": [
            {"name": "list_preferences", "arguments": {"action_and_reasoning": "Checking the constraints before I pick a hotel."}},
            {"name": "append_to_document", "arguments": {
                "text": "\n## Hotel\n\nCasa do Alfama, 220 EUR a night, 6 minutes from the tram 28 stop.\n",
                "action_and_reasoning": "Adding the hotel that fits the budget and the walkable wish."}},
            {"name": "toggle_todos", "arguments": {"indices": [5], "action_and_reasoning": "The hotel step is done."}}
        ]},
        {"text": "I picked **Casa do Alfama**: four nights come to 880 EUR, which keeps the total at 1,770 EUR, under your 2,000 EUR limit. It is in Alfama, so most of days 1 and 4 are on foot. Shall I look at Sintra tickets next?"}
    ]});
    let server = Server::start(ServerOptions::new(Engine::Sqlite).replay(script)).await;
    server.create_thread("porto", "Weekend in Porto").await;
    server.create_thread("kitchen", "Kitchen renovation").await;
    let thread = server.create_thread("lisbon", "Lisbon in May").await;
    realistic_workspace(&server, &thread).await;
    let browser = Browser::start().await;
    browser.set_viewport(1280, 800).await;
    open_thread(&browser, &server, &thread).await;
    send_chat(
        &browser,
        "Find us a hotel that fits the budget, somewhere walkable.",
    )
    .await;
    browser
        .wait_text(
            ".turn .msg.assistant .msg-content",
            "Shall I look at Sintra tickets next?",
        )
        .await;
    browser
        .wait_count("#artifact-list li[data-artifact-id]", 2)
        .await;
    browser
        .wait_js(
            "the charts to load",
            "const imgs = [...document.querySelectorAll('#artifact-list img')];
         return imgs.length === 2 && imgs.every((i) => i.complete && i.naturalWidth > 0);",
            vec![],
        )
        .await;
    // Show the trace of the turn.
    browser.click(".turn details.reasoning > summary").await;
    browser
        .wait_js(
            "the reasoning trace to open",
            "const d = document.querySelector('.turn details.reasoning'); return d && d.open;",
            vec![],
        )
        .await;
    // Let the highlight fade and the answer's final rendering settle.
    browser
        .wait_js(
            "no panel to flash",
            "return document.querySelectorAll('.flash').length === 0;",
            vec![],
        )
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    let path = browser::ui_target_dir().join("main.png");
    browser.screenshot(&path).await;
    let png = std::fs::read(&path).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
    eprintln!("screenshot: {}", path.display());
    browser.assert_no_js_errors().await;
}
