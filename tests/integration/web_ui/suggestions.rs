//! Suggestions in the page (issue 25): switch to suggest mode, select a passage and ask about
//! it, see the agent's suggestion marked inside the document as a tracked change (struck and
//! inserted text at its place, with the reason and Accept / Reject beside it), accept one,
//! reject another with the keyboard, see one that crosses paragraphs shown as a block that
//! says why, and an outdated one explained; every change arrives live.

use super::*;

const BODY: &str = "Intro paragraph.\n\nA very long sentence that rambles on and on.\n\nThird paragraph here.\n\n- item one\n- item two\n";

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

/// Where suggestion `id` sits in the page: its placement, the tag of the document block it is
/// in (inline) or follows (a block), the text right before and after it, and what it strikes
/// and inserts.
async fn placed(browser: &Browser, id: i64) -> serde_json::Value {
    browser
        .wait_js(
            &format!("suggestion #{id} in the document"),
            "const s = document.querySelector(`#document-view .suggestion[data-id=\"${arguments[0]}\"]`);
             if (!s) return null;
             const text = (n) => (n && n.nodeType === Node.TEXT_NODE ? n.data : null);
             return {
               placement: s.dataset.placement,
               block: (s.dataset.placement === 'inline' ? s.parentElement : s.previousElementSibling)?.tagName ?? null,
               before: text(s.previousSibling),
               after: text(s.nextSibling),
               del: [...s.querySelectorAll('del.sugg-del')].map((d) => d.textContent),
               ins: [...s.querySelectorAll('ins.sugg-ins')].map((d) => d.textContent),
               reason: (s.querySelector('.suggestion-reason') || {}).textContent,
               note: (s.querySelector('.suggestion-note') || {}).textContent || null,
             };",
            vec![json!(id)],
        )
        .await
}

async fn select_ask_accept_reject_and_see_outdated(engine: Engine) {
    let script = json!({"responses": [
        {"text": "", "tool_calls": [
            {"name": "edit_document", "arguments": {
                "edits": [{"old_text": "very long sentence that rambles on and on", "new_text": "short sentence"}],
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
    select_in_document(&browser, "very long sentence that rambles on and on").await;
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

    // The agent's edit arrives as a suggestion marked inside the paragraph it changes: the
    // words it deletes struck through, its replacement inserted right after them, its reason
    // and buttons beside it; the document itself is unchanged.
    let first = placed(&browser, 1).await;
    assert_eq!(
        first,
        json!({
            "placement": "inline", "block": "P", "before": "A ", "after": ".",
            "del": ["very long sentence that rambles on and on"], "ins": ["short sentence"],
            "reason": "Tightening the sentence you pointed at.", "note": null,
        })
    );
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
        asked.starts_with("About this passage of the document (characters 20-61"),
        "{asked}"
    );
    assert!(
        asked.contains("> very long sentence that rambles"),
        "{asked}"
    );

    // Three more, made over the tools endpoint (another client): they appear live, two in
    // the text, and one that joins two list items as a block after the list, saying why.
    server.tool_ok(&thread, "edit_document", json!({"edits": [{"old_text": "Third paragraph here.", "new_text": "Final paragraph."}]})).await;
    server
        .tool_ok(
            &thread,
            "edit_document",
            json!({"edits": [{"old_text": "Intro paragraph.", "new_text": "Opening paragraph."}]}),
        )
        .await;
    server
        .tool_ok(
            &thread,
            "edit_document",
            json!({"edits": [{"old_text": "item one\n- item two", "new_text": "items one and two"}]}),
        )
        .await;
    browser.wait_count("#document-view .suggestion", 4).await;
    let second = placed(&browser, 2).await;
    assert_eq!(
        (
            &second["placement"],
            &second["del"],
            &second["ins"],
            &second["after"]
        ),
        (
            &json!("inline"),
            &json!(["Third paragraph here"]),
            &json!(["Final paragraph"]),
            &json!(".")
        )
    );
    let third = placed(&browser, 3).await;
    assert_eq!(
        (&third["placement"], &third["del"], &third["ins"]),
        (&json!("inline"), &json!(["Intro"]), &json!(["Opening"]))
    );
    let fourth = placed(&browser, 4).await;
    assert_eq!(
        (&fourth["placement"], &fourth["block"]),
        (&json!("structure"), &json!("UL"))
    );
    assert!(
        fourth["note"]
            .as_str()
            .unwrap()
            .contains("cannot be marked inside the text"),
        "{fourth}"
    );
    browser
        .wait_text(
            "#suggestions-placement",
            "3 marked in the text, 1 shown as blocks",
        )
        .await;
    // What the agent inserts is text, never markup: the page shows it as written.
    assert_eq!(
        browser
            .js(
                "return document.querySelectorAll('#document-view ins.sugg-ins *').length;",
                vec![]
            )
            .await,
        json!(0)
    );

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
        .wait_attr(
            "#document-view .suggestion[data-id=\"3\"]",
            "data-applies",
            "false",
        )
        .await;
    let stale = placed(&browser, 3).await;
    assert_eq!(stale["placement"], json!("stale"));
    assert!(
        stale["note"]
            .as_str()
            .unwrap()
            .contains("no longer applies"),
        "{stale}"
    );
    // `HAICO_SUGGESTIONS_SCREENSHOT=1` saves the page as it is now for docs/UI.md.
    if std::env::var_os("HAICO_SUGGESTIONS_SCREENSHOT").is_some() {
        browser
            .js(
                "document.querySelectorAll('#toasts > *').forEach((t) => t.remove());",
                vec![],
            )
            .await;
        browser
            .screenshot(std::path::Path::new("docs/suggestions.png"))
            .await;
    }

    // Accept #1 with a click: the text changes, the marks go.
    browser
        .click("#document-view .suggestion[data-id=\"1\"] button[data-action=\"accept\"]")
        .await;
    browser
        .wait_text("#document-view", "A short sentence.")
        .await;
    browser.wait_count("#document-view .suggestion", 3).await;

    // The buttons are reachable with Tab; reject #2 from the keyboard with Enter.
    browser
        .js("document.querySelector('#document-view .suggestion[data-id=\"2\"] button[data-action=\"accept\"]').focus();", vec![])
        .await;
    browser.press(browser::TAB).await;
    assert_eq!(
        browser
            .js(
                "return document.activeElement.getAttribute('aria-label');",
                vec![]
            )
            .await,
        json!("Reject suggestion 2")
    );
    browser.press(browser::ENTER_KEY).await;
    browser.wait_count("#document-view .suggestion", 2).await;
    assert!(
        server.document(&thread).await["content"]
            .as_str()
            .unwrap()
            .contains("Third paragraph here.")
    );
    assert_eq!(
        browser.js("return document.querySelectorAll('#document-view del.sugg-del, #document-view ins.sugg-ins').length;", vec![]).await,
        json!(0),
        "only blocks are left, no marks in the text"
    );

    // Accepting the outdated one explains why nothing changed.
    browser
        .click("#document-view .suggestion[data-id=\"3\"] button[data-action=\"accept\"]")
        .await;
    browser.wait_visible("#suggestions-status").await;
    browser.wait_text("#suggestions-status", "outdated").await;
    browser.wait_count("#document-view .suggestion", 1).await;

    // Reject all clears what is left.
    browser.click("#suggestions-reject-all").await;
    browser.wait_hidden("#suggestions").await;
    browser.wait_count("#document-view .suggestion", 0).await;
    let statuses: Vec<String> = server
        .get(&format!("/api/threads/{thread}/suggestions"))
        .await
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["status"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(statuses, ["accepted", "rejected", "outdated", "rejected"]);
    assert_eq!(
        server.document(&thread).await["content"],
        json!(
            BODY.replace("Intro paragraph.", "Welcome paragraph.")
                .replace(
                    "very long sentence that rambles on and on",
                    "short sentence"
                )
        )
    );
    browser.assert_no_js_errors().await;
}
on_both_engines!(select_ask_accept_reject_and_see_outdated);
