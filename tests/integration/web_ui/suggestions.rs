//! Suggestions in the page (issue 25): switch to suggest mode, select a passage and ask about
//! it, accept one suggestion, reject another with the keyboard, and see an outdated one
//! explained; every change arrives live.

use super::*;

const BODY: &str =
    "Intro paragraph.\n\nA very long sentence that rambles on and on.\n\nThird paragraph here.\n";

/// Selects `needle` inside `#document-view`, as a person dragging over it would.
async fn select_in_document(browser: &Browser, needle: &str) {
    let found = browser
        .js(
            "const needle = arguments[0];
             const view = document.querySelector('#document-view');
             const walker = document.createTreeWalker(view, NodeFilter.SHOW_TEXT);
             for (let node = walker.nextNode(); node; node = walker.nextNode()) {
               const at = node.data.indexOf(needle);
               if (at < 0) continue;
               const range = document.createRange();
               range.setStart(node, at);
               range.setEnd(node, at + needle.length);
               const selection = document.getSelection();
               selection.removeAllRanges();
               selection.addRange(range);
               view.dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));
               return true;
             }
             return false;",
            vec![json!(needle)],
        )
        .await;
    assert_eq!(found, json!(true), "{needle:?} is not in the document view");
}

async fn select_ask_accept_reject_and_see_outdated(engine: Engine) {
    let script = json!({"responses": [
        {"text": "", "tool_calls": [
            {"name": "edit_document", "arguments": {
                "edits": [{"old_text": "A very long sentence that rambles on and on.", "new_text": "A short sentence."}],
                "action_and_reasoning": "Tightening the sentence you pointed at."}}
        ]},
        {"text": "I suggested a shorter sentence; accept it if you like it."}
    ]});
    let server = Server::start(ServerOptions::new(engine).replay(script)).await;
    let thread = server.create_thread("sugg", "Suggestions").await;
    server.set_document(&thread, "Notes", BODY).await;
    let browser = Browser::start().await;
    open_thread(&browser, &server, &thread).await;
    browser.wait_text("#document-view", "rambles on").await;

    // The toggle puts the thread in suggest mode.
    browser.click("#document-mode").await;
    browser
        .wait_attr("#document-mode", "aria-pressed", "true")
        .await;
    assert_eq!(
        server.get(&format!("/api/threads/{thread}")).await["document_mode"],
        json!("suggest")
    );

    // Select a passage, ask about it: the chat quotes it and the server gets its offsets.
    select_in_document(&browser, "A very long sentence that rambles on and on.").await;
    browser.wait_visible("#ask-selection").await;
    browser.click("#ask-selection").await;
    browser.wait_visible("#chat-selection").await;
    browser
        .wait_text("#chat-selection-text", "very long sentence")
        .await;
    // Sent with Enter (a toast about the mode may still cover the Send button).
    browser.type_into("#chat-input", "Make this shorter.").await;
    browser.press(browser::ENTER_KEY).await;
    browser.wait_hidden("#chat-selection").await;
    browser
        .wait_text(".turn .msg.user", "Make this shorter.")
        .await;

    // The agent's edit arrives as a suggestion, shown as tracked changes with its reason.
    let first = ".suggestion[data-id=\"1\"]";
    browser.wait_visible(first).await;
    browser
        .wait_text(
            &format!("{first} .suggestion-reason"),
            "Tightening the sentence",
        )
        .await;
    browser
        .wait_text(&format!("{first} del"), "rambles on and on")
        .await;
    browser
        .wait_text(&format!("{first} ins"), "A short sentence.")
        .await;
    assert!(
        server.document(&thread).await["content"]
            .as_str()
            .unwrap()
            .contains("rambles")
    );
    // The message went with the selection's offsets: the stored message quotes the passage.
    let turns = server.get(&format!("/api/threads/{thread}/messages")).await;
    let asked = turns[0]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        asked.starts_with("About this passage of the document (characters 18-62"),
        "{asked}"
    );
    assert!(
        asked.contains("> A very long sentence that rambles"),
        "{asked}"
    );

    // Two more, made over the tools endpoint (another client): they appear live.
    server.tool_ok(&thread, "edit_document", json!({"edits": [{"old_text": "Third paragraph here.", "new_text": "Final paragraph."}]})).await;
    server
        .tool_ok(
            &thread,
            "edit_document",
            json!({"edits": [{"old_text": "Intro paragraph.", "new_text": "Opening paragraph."}]}),
        )
        .await;
    browser.wait_count(".suggestion", 3).await;

    // The person rewrites the passage #3 changes: it is marked as no longer applying.
    let doc = server.document(&thread).await;
    server
        .put(
            &format!("/api/threads/{thread}/document"),
            json!({
                "content": BODY.replace("Intro paragraph.", "Welcome paragraph."),
                "expected_version": doc["version"],
            }),
        )
        .await;
    browser
        .wait_attr(".suggestion[data-id=\"3\"]", "data-applies", "false")
        .await;
    browser
        .wait_text(
            ".suggestion[data-id=\"3\"] .suggestion-note",
            "no longer applies",
        )
        .await;
    // `HAICO_SUGGESTIONS_SCREENSHOT=1` saves the page as it is now for docs/UI.md.
    if std::env::var_os("HAICO_SUGGESTIONS_SCREENSHOT").is_some() {
        browser
            .screenshot(std::path::Path::new("docs/suggestions.png"))
            .await;
    }

    // Accept #1 with a click.
    browser
        .click(&format!("{first} button[data-action=\"accept\"]"))
        .await;
    browser
        .wait_text("#document-view", "A short sentence.")
        .await;
    browser.wait_count(".suggestion", 2).await;

    // Reject #2 from the keyboard: focus its button, press Enter.
    browser
        .js("document.querySelector('.suggestion[data-id=\"2\"] button[data-action=\"reject\"]').focus();", vec![])
        .await;
    browser.press(browser::ENTER_KEY).await;
    browser.wait_count(".suggestion", 1).await;
    assert!(
        server.document(&thread).await["content"]
            .as_str()
            .unwrap()
            .contains("Third paragraph here.")
    );

    // Accepting the outdated one explains why nothing changed.
    browser
        .click(".suggestion[data-id=\"3\"] button[data-action=\"accept\"]")
        .await;
    browser.wait_visible("#suggestions-status").await;
    browser.wait_text("#suggestions-status", "outdated").await;
    browser.wait_hidden("#suggestions").await;
    let statuses: Vec<String> = server
        .get(&format!("/api/threads/{thread}/suggestions"))
        .await
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["status"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(statuses, ["accepted", "rejected", "outdated"]);
    browser.assert_no_js_errors().await;
}
on_both_engines!(select_ask_accept_reject_and_see_outdated);
