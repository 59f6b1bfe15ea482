//! Live sync: two windows on one thread, errors people understand, and the server going
//! away and coming back.

use super::*;

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
    browser.wait_count("#plan-list li[data-step-id]", 1).await;

    // Window 1: add a step.
    browser.switch_to(&first).await;
    browser.type_into("#plan-input", "Book the hotel").await;
    browser.click("#plan-add").await;
    browser.wait_count("#plan-list li[data-step-id]", 2).await;
    browser.switch_to(&second).await;
    browser
        .wait_text("#plan-list .plan-step-text", "Book the hotel")
        .await;

    // Window 1: tick it.
    browser.switch_to(&first).await;
    let step_id = browser
        .js("const li = [...document.querySelectorAll('#plan-list li[data-step-id]')].find((l) => l.textContent.includes('Book the hotel'));
             return li ? li.dataset.stepId : null;", vec![])
        .await;
    let step_id = step_id
        .as_str()
        .expect("the new step has a data-step-id")
        .to_string();
    let checkbox =
        format!("#plan-list li[data-step-id=\"{step_id}\"] input.plan-step-done[type=checkbox]");
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
        .wait_text("#plan-list .plan-step-text", "Pack the bags")
        .await;
    browser.switch_to(&first).await;
    browser
        .wait_text("#plan-list .plan-step-text", "Pack the bags")
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
        .wait_text("#plan-list .plan-step-text", "Agent step")
        .await;
    browser
        .wait_text("#document-view", "Agent wrote this.")
        .await;
    browser.wait_flash("plan").await;
    browser.wait_flash("document").await;
    browser.switch_to(&first).await;
    browser
        .wait_text("#plan-list .plan-step-text", "Agent step")
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
// (h) errors: no model configured; the server going away and coming back
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_model_chat_says_how_to_configure_one() {
    needs!(chromium);
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

    // The re-sync after the reconnect reads the whole workspace. Hold its answer back for a
    // while in the page, so it arrives after the change made below and its event: the page
    // must not put the older objective back over the newer one.
    browser
        .js(
            "const original = window.fetch;
             window.fetch = async (...args) => {
               const response = await original(...args);
               if (String(args[0]).includes('/workspace?html=true')) {
                 await new Promise((resolve) => setTimeout(resolve, 2500));
               }
               return response;
             };",
            vec![],
        )
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
    tokio::time::sleep(std::time::Duration::from_secs(4)).await;
    let shown = browser
        .js(
            "return document.querySelector('#objective-text').innerText;",
            vec![],
        )
        .await;
    assert!(
        shown
            .as_str()
            .is_some_and(|text| text.contains("After the restart")),
        "the re-sync's older answer replaced the newer objective: {shown}"
    );
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
// A live update redraws only what changed: the row someone is on stays, with its focus
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_updates_keep_the_rows_in_place() {
    needs!(chromium);
    let server = Server::start(ServerOptions::new(Engine::Sqlite)).await;
    let thread = server.create_thread("rows", "Rows").await;
    for text in ["Pick dates", "Book flights", "Find a hotel"] {
        server.add_todo(&thread, text).await;
    }
    server
        .add_preference(&thread, json!({"title": "Window seat", "kind": "soft"}))
        .await;
    let browser = Browser::start().await;
    open_thread(&browser, &server, &thread).await;
    browser.wait_count("#plan-list li[data-step-id]", 3).await;
    // Hold on to the second step's checkbox and the preference's lock, focused.
    browser
        .js(
            "window.__box = document.querySelectorAll('#plan-list input.plan-step-done')[1];
             window.__lock = document.querySelector('#preference-list .pref-lock');
             window.__box.focus();",
            vec![],
        )
        .await;

    // The agent adds a step at the end and a preference; a user edits the first step's text.
    server
        .tool_ok(
            &thread,
            "add_todos",
            json!({"steps": [{"text": "Agent's new step"}]}),
        )
        .await;
    server
        .tool_ok(
            &thread,
            "add_preferences",
            json!({"items": [{"title": "Quiet hotel", "kind": "soft"}]}),
        )
        .await;
    browser.wait_count("#plan-list li[data-step-id]", 4).await;
    browser
        .wait_count("#preference-list li[data-preference-id]", 2)
        .await;
    let kept = browser
        .js(
            "return [window.__box.isConnected, document.activeElement === window.__box,
                     window.__lock.isConnected];",
            vec![],
        )
        .await;
    assert_eq!(
        kept,
        json!([true, true, true]),
        "[checkbox still in the page, still focused, lock button still in the page]"
    );

    // A click on the kept checkbox still lands.
    browser.js("window.__box.click();", vec![]).await;
    browser
        .wait_js(
            "the second step to be done on the server",
            "return document.querySelectorAll('#plan-list li.done').length === 1;",
            vec![],
        )
        .await;
    let todos = server.get(&format!("/api/threads/{thread}/todos")).await;
    let done: Vec<_> = todos
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["done"] == json!(true))
        .map(|t| t["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(done, vec!["Book flights".to_string()]);
    browser.assert_no_js_errors().await;
}
