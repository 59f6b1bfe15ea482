//! A chat turn in the browser: the streamed answer, the reasoning trace, the panels it
//! changed, a locked preference the agent cannot touch, and the stop button.

use super::*;

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
    browser.wait_count(".turn details.reasoning .call", 4).await;
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
        summary
            .iter()
            .any(|s| s.contains("Internal reasoning") && s.contains("4 tool calls")),
        "details.reasoning summary: {summary:?}"
    );
    let tools = browser.texts(".turn .call .call-tool").await;
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
            "tool call {i} should be {tool}: {tools:?}"
        );
    }
    let reasons = browser.texts(".turn .call .call-reason").await;
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
            "tool call {i} should give its action_and_reasoning {reason:?}: {reasons:?}"
        );
    }
    assert_eq!(
        browser.count(".turn .call .call-outcome.ok").await,
        4,
        "every tool call succeeded"
    );
    assert_eq!(browser.count(".turn .call .call-outcome.failed").await, 0);

    // What the turn cost: both model calls' tokens, summed, and the share served from cache.
    browser
        .wait_text(
            ".turn .turn-usage",
            "2 model calls · 8,400 prompt tokens, 48% cached · 320 written · first token after",
        )
        .await;

    // The panels.
    browser
        .wait_text(
            "#objective-text",
            "Plan a 5-day trip to Lisbon under 2,000 EUR",
        )
        .await;
    browser.wait_count("#plan-list li[data-step-id]", 4).await;
    browser
        .wait_text(
            "#plan-list li[data-depth=\"1\"] .plan-step-text",
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
    browser.wait_count(".turn details.reasoning .call", 4).await;
    browser.wait_for(".turn .chart img").await;
    browser.wait_text("#document-view h2", "Budget").await;
    browser
        .wait_text(".turn .turn-usage", "8,400 prompt tokens, 48% cached")
        .await;
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
    browser.wait_count(".turn .call", 2).await;
    let tools = browser.texts(".turn .call .call-tool").await;
    assert!(
        tools[0].contains("remove_preferences") && tools[1].contains("update_preferences"),
        "{tools:?}"
    );
    // Each tool call says that nothing changed because the preference is locked, and is not
    // marked as a plain success (docs/UI.md: `.call-outcome` is `unchanged` for a call whose
    // summary starts with "nothing changed: ").
    let calls = browser.texts(".turn .call").await;
    for call in &calls {
        assert!(
            call.contains("nothing changed") && call.contains("locked by the user"),
            "each tool call should report the locked preference it left alone: {calls:?}"
        );
    }
    let classes = browser
        .js(
            "return [...document.querySelectorAll('.turn .call .call-outcome')].map((e) => e.className);",
            vec![],
        )
        .await;
    for class in classes.as_array().unwrap() {
        let class = class.as_str().unwrap();
        assert!(
            class.split(' ').any(|c| c == "unchanged"),
            "an attempt that changed nothing is not marked as such: {classes}"
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_ends_a_running_turn() {
    needs!(chromium);
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
