//! The workspace's history in the browser: revisions grouped by turn with the agent's reasons,
//! a past workspace shown read-only, the document's diff, restores (whole and one panel),
//! "Undo this turn" in the chat (done, refused, nothing to undo), forks and the side-by-side
//! comparison with the original, paging, the exported recording, and all of it by keyboard.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::Value;

use super::*;
use browser::{ENTER_KEY, TAB};

const ESCAPE_KEY: char = '\u{e00c}';

/// Opens the history dialog with `#history-open` and waits for its first revision row.
async fn open_history(browser: &Browser) {
    browser.click("#history-open").await;
    browser.wait_visible("#history-dialog").await;
    browser.wait_for("#history-list li[data-rev]").await;
}

/// Selects revision `rev` in the open history and waits for its workspace.
async fn select_rev(browser: &Browser, rev: i64) {
    browser
        .click(&format!(
            "#history-list li[data-rev=\"{rev}\"] button.history-rev-select"
        ))
        .await;
    wait_detail(browser, rev).await;
}

/// Waits until the detail pane shows revision `rev`, loaded.
async fn wait_detail(browser: &Browser, rev: i64) {
    browser
        .wait_js(
            &format!("the workspace at revision {rev} in #history-detail"),
            "const d = document.querySelector('#history-detail');
             return d && !d.hidden && d.dataset.rev === arguments[0] && !d.hasAttribute('aria-busy')
               && d.querySelector('#history-snapshot [data-panel]') !== null
               ? true : {ok: false, rev: d && d.dataset.rev, busy: d && d.hasAttribute('aria-busy')};",
            vec![json!(rev.to_string())],
        )
        .await;
}

/// The `data-rev` of every revision row, in order.
async fn listed_revs(browser: &Browser) -> Vec<i64> {
    browser
        .js(
            "return [...document.querySelectorAll('#history-list li[data-rev]')].map((l) => Number(l.dataset.rev));",
            vec![],
        )
        .await
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect()
}

/// Polls the thread's workspace until `check` holds (the page acts asynchronously).
async fn wait_workspace(
    server: &Server,
    thread: &str,
    what: &str,
    check: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let ws = server.workspace(thread).await;
        if check(&ws) {
            return ws;
        }
        assert!(Instant::now() < deadline, "{what}: the workspace is {ws:#}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn step_texts(ws: &Value) -> Vec<String> {
    ws["todos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["text"].as_str().unwrap().to_string())
        .collect()
}

fn preference_titles(ws: &Value) -> Vec<String> {
    ws["preferences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["title"].as_str().unwrap().to_string())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The list (grouped by turn, with reasons), a past workspace, the document's diff, live updates
// ---------------------------------------------------------------------------------------------

fn porto_script() -> Value {
    json!({"responses": [
        {"text": "", "tool_calls": [
            {"name": "set_objective", "arguments": {
                "objective": "Plan a weekend in Porto",
                "action_and_reasoning": "Recording the goal: a weekend in Porto."}},
            {"name": "add_todos", "arguments": {
                "steps": [{"text": "Book the train"}, {"text": "Find a guesthouse"}],
                "action_and_reasoning": "Outlining the plan in two steps."}},
            {"name": "update_document", "arguments": {
                "title": "Porto",
                "content": "# Porto\n\nDay one: Ribeira.\nDay two: Serralves.\n",
                "action_and_reasoning": "Drafting the itinerary day by day."}}
        ]},
        {"text": "The weekend is planned."}
    ]})
}

async fn history_lists_turns_and_shows_a_past_workspace(engine: Engine) {
    let server = Server::start(ServerOptions::new(engine).replay(porto_script())).await;
    let thread = server.create_thread("porto", "Porto").await;
    // Revision 1: a person's preference. Revisions 2–4: the agent's turn 1. Revision 5: a
    // person's edit of the document.
    server
        .add_preference(&thread, json!({"title": "No night trains", "kind": "hard"}))
        .await;
    let browser = Browser::start().await;
    open_thread(&browser, &server, &thread).await;
    send_chat(&browser, "Plan a weekend in Porto for me").await;
    browser
        .wait_text(
            ".turn .msg.assistant .msg-content",
            "The weekend is planned.",
        )
        .await;
    browser.wait_for(".turn button.turn-undo").await;
    server
        .set_document(
            &thread,
            "Porto",
            "# Porto\n\nDay one: Ribeira and the bridge.\nDay two: Serralves.\nDay three: the Douro valley.\n",
        )
        .await;
    browser
        .wait_text("#document-view", "Day three: the Douro valley.")
        .await;

    open_history(&browser).await;
    browser
        .wait_text("#history-heading", "History of “Porto”")
        .await;
    // Newest first, ending with revision 0 (the empty start: this is the whole history).
    browser.wait_count("#history-list li[data-rev]", 6).await;
    assert_eq!(listed_revs(&browser).await, [5, 4, 3, 2, 1, 0]);
    // The turn's revisions are one group, with the agent's reasons and tools.
    let turn = "#history-list .history-group[data-group=\"turn\"][data-turn-index=\"1\"]";
    browser.wait_count(&format!("{turn} li[data-rev]"), 3).await;
    browser.wait_text(turn, "Turn 1").await;
    let reasons = browser.texts(&format!("{turn} .rev-why")).await;
    assert_eq!(
        reasons,
        [
            "Drafting the itinerary day by day.",
            "Outlining the plan in two steps.",
            "Recording the goal: a weekend in Porto."
        ],
        "each revision of the turn gives its action_and_reasoning"
    );
    let tools = browser.texts(&format!("{turn} .rev-tool")).await;
    assert_eq!(tools, ["update_document", "add_todos", "set_objective"]);
    let who = browser.texts(&format!("{turn} .rev-who")).await;
    assert!(who.iter().all(|w| w == "agent"), "{who:?}");
    // The person's edits are groups of their own, marked as such.
    for rev in [5, 1] {
        let row = format!(
            "#history-list .history-group[data-group=\"user\"] li[data-rev=\"{rev}\"][data-source=\"user\"]"
        );
        browser.wait_for(&row).await;
        browser
            .wait_text_content(&format!("{row} .rev-who"), "person")
            .await;
    }
    let panels = browser
        .texts("#history-list li[data-rev=\"3\"] .rev-panel")
        .await;
    assert_eq!(panels, ["plan"]);
    let summary = browser
        .texts("#history-list li[data-rev=\"2\"] .rev-summary")
        .await;
    assert!(
        summary[0].contains("Plan a weekend in Porto"),
        "{summary:?}"
    );
    browser
        .wait_text("#history-list li[data-rev=\"5\"] .rev-badge.now", "now")
        .await;
    browser
        .wait_text("#history-list li[data-rev=\"5\"] .rev-time", ":")
        .await;

    // Revision 4: the workspace right after the agent's draft, read-only.
    select_rev(&browser, 4).await;
    browser.wait_visible("#history-readonly").await;
    browser
        .wait_text("#history-detail-why", "Drafting the itinerary day by day.")
        .await;
    browser
        .wait_text("#history-detail-heading", "Revision 4")
        .await;
    let snapshot = "#history-snapshot";
    browser
        .wait_text(
            &format!("{snapshot} [data-panel=\"objective\"] .snap-objective"),
            "Plan a weekend in Porto",
        )
        .await;
    browser
        .wait_text(
            &format!("{snapshot} [data-panel=\"document\"] .snap-document-view h1"),
            "Porto",
        )
        .await;
    let doc = browser
        .text(&format!("{snapshot} .snap-document-view"))
        .await
        .unwrap();
    assert!(
        doc.contains("Day one: Ribeira.") && !doc.contains("bridge") && !doc.contains("Douro"),
        "the document as it was at revision 4: {doc:?}"
    );
    assert_eq!(
        browser
            .texts(&format!("{snapshot} .snap-plan .snap-step-text"))
            .await,
        ["Book the train", "Find a guesthouse"]
    );
    assert_eq!(
        browser
            .texts(&format!("{snapshot} .snap-preferences .snap-pref-title"))
            .await,
        ["No night trains"]
    );
    assert_eq!(
        browser
            .js(
                "return document.querySelector('#history-snapshot [data-panel=\"document\"]').classList.contains('changed');",
                vec![]
            )
            .await,
        json!(true),
        "the panel this revision changed is marked"
    );
    // Read-only: nothing in the snapshot can be edited.
    assert_eq!(
        browser
            .count("#history-snapshot input, #history-snapshot textarea, #history-snapshot select, #history-snapshot [contenteditable]")
            .await,
        0
    );
    // The page's own panels still show the present.
    browser.wait_text("#document-view", "Day three").await;

    // Revision 3: before the document existed.
    select_rev(&browser, 3).await;
    browser
        .wait_text(
            "#history-snapshot [data-panel=\"document\"]",
            "No document.",
        )
        .await;

    // The document's diff from revision 4 to now: removed and added lines marked.
    select_rev(&browser, 4).await;
    browser.click("#history-compare").await;
    browser.wait_visible("#history-diff").await;
    browser
        .wait_text_content("#history-diff-heading", "revision 4 → now (revision 5)")
        .await;
    let removed = browser.texts("#history-diff del.diff-del .diff-text").await;
    assert_eq!(removed, ["Day one: Ribeira."], "removed lines");
    let added = browser.texts("#history-diff ins.diff-add .diff-text").await;
    assert_eq!(
        added,
        [
            "Day one: Ribeira and the bridge.",
            "Day three: the Douro valley."
        ],
        "added lines"
    );
    let context = browser.texts("#history-diff .diff-ctx .diff-text").await;
    assert!(
        context.iter().any(|c| c == "Day two: Serralves."),
        "{context:?}"
    );
    // Marked in words and signs, not only in colour.
    let signs = browser
        .texts("#history-diff .diff-add .diff-sign, #history-diff .diff-del .diff-sign")
        .await;
    assert!(signs.iter().all(|s| s == "+" || s == "−"), "{signs:?}");
    browser
        .wait_text_content("#history-diff .diff-add", "Added:")
        .await;
    browser
        .wait_text_content("#history-diff .diff-del", "Removed:")
        .await;
    browser.wait_text("#history-diff .diff-hunk", "@@").await;
    browser
        .screenshot(&browser::ui_target_dir().join("history.png"))
        .await;

    // Live: a change while the history is open is listed at once; the selection stays.
    server.set_objective(&thread, "Porto, but in June").await;
    browser.wait_count("#history-list li[data-rev]", 7).await;
    assert_eq!(listed_revs(&browser).await[0], 6);
    browser
        .wait_text("#history-list li[data-rev=\"6\"] .rev-badge.now", "now")
        .await;
    assert_eq!(
        browser
            .count("#history-list li[data-rev=\"5\"] .rev-badge.now")
            .await,
        0
    );
    browser.wait_attr("#history-detail", "data-rev", "4").await;
    // The newest revision is the present: nothing to restore or compare.
    select_rev(&browser, 6).await;
    browser.wait_visible("#history-current-note").await;
    assert!(!browser.is_visible("#history-readonly").await);
    assert_eq!(
        browser
            .js(
                "return [document.querySelector('#history-restore').disabled, document.querySelector('#history-compare').disabled];",
                vec![]
            )
            .await,
        json!([true, true])
    );

    // Escape closes the dialog; nothing changed on the server by looking.
    browser.press(ESCAPE_KEY).await;
    browser.wait_hidden("#history-dialog").await;
    let ws = server.workspace(&thread).await;
    assert_eq!(ws["objective"], json!("Porto, but in June"));
    assert_eq!(
        server.get(&format!("/api/threads/{thread}/history")).await["revisions"]
            .as_array()
            .unwrap()
            .len(),
        6
    );
    browser.assert_no_js_errors().await;
}
on_both_engines!(history_lists_turns_and_shows_a_past_workspace);

// ---------------------------------------------------------------------------------------------
// Restore: one panel, then the whole workspace
// ---------------------------------------------------------------------------------------------

async fn restore_one_panel_then_the_whole_workspace(engine: Engine) {
    let server = Server::start(ServerOptions::new(engine)).await;
    let thread = server.create_thread("restore", "Restore").await;
    server
        .tool_ok(&thread, "set_objective", json!({"objective": "First goal"}))
        .await; // 1
    server
        .tool_ok(
            &thread,
            "add_todos",
            json!({"steps": [{"text": "Step A"}, {"text": "Step B"}]}),
        )
        .await; // 2
    server.set_document(&thread, "Notes", "Version one\n").await; // 3
    server
        .add_preference(&thread, json!({"title": "Quiet hotel", "kind": "soft"}))
        .await; // 4
    server.set_objective(&thread, "Second goal").await; // 5
    server.add_todo(&thread, "Step C").await; // 6
    server.set_document(&thread, "Notes", "Version two\n").await; // 7
    server
        .add_preference(&thread, json!({"title": "Near the sea", "kind": "hard"}))
        .await; // 8

    let browser = Browser::start().await;
    open_thread(&browser, &server, &thread).await;
    browser.wait_text("#objective-text", "Second goal").await;
    open_history(&browser).await;
    browser.wait_count("#history-list li[data-rev]", 9).await;
    select_rev(&browser, 4).await;

    // One panel: the objective only.
    browser
        .click("#history-detail button[data-restore-panel=\"objective\"]")
        .await;
    browser
        .wait_text("#history-status", "back as at revision 4")
        .await;
    let ws = wait_workspace(&server, &thread, "the objective restored", |ws| {
        ws["objective"] == json!("First goal")
    })
    .await;
    assert_eq!(
        step_texts(&ws),
        ["Step A", "Step B", "Step C"],
        "the plan stays"
    );
    assert_eq!(ws["document"]["content"], json!("Version two\n"));
    assert_eq!(preference_titles(&ws), ["Quiet hotel", "Near the sea"]);
    // The page's panel follows, and the restore is listed as such.
    browser.wait_text("#objective-text", "First goal").await;
    browser
        .wait_text(
            "#history-list li[data-rev=\"9\"] .rev-badge.mark",
            "Restore of revision 4",
        )
        .await;
    assert_eq!(
        browser
            .texts("#history-list li[data-rev=\"9\"] .rev-panel")
            .await,
        ["objective"]
    );
    browser.wait_attr("#history-detail", "data-rev", "4").await;

    // The whole workspace.
    browser.click("#history-restore").await;
    browser
        .wait_text("#history-status", "The workspace is back as at revision 4")
        .await;
    let ws = wait_workspace(&server, &thread, "the workspace restored", |ws| {
        ws["document"]["content"] == json!("Version one\n")
    })
    .await;
    assert_eq!(ws["objective"], json!("First goal"));
    assert_eq!(step_texts(&ws), ["Step A", "Step B"]);
    assert_eq!(preference_titles(&ws), ["Quiet hotel"]);
    browser.wait_count("#history-list li[data-rev]", 11).await;
    let panels = browser
        .texts("#history-list li[data-rev=\"10\"] .rev-panel")
        .await;
    assert_eq!(panels, ["document", "plan", "preferences"]);
    browser.wait_count("#plan-list li[data-step-id]", 2).await;
    browser.wait_text("#document-view", "Version one").await;
    browser
        .wait_count("#preference-list li[data-preference-id]", 1)
        .await;

    // Again: nothing left to restore, and no new revision.
    browser.click("#history-restore").await;
    browser
        .wait_text("#history-status", "nothing to restore")
        .await;
    assert_eq!(
        server.get(&format!("/api/threads/{thread}/history")).await["revisions"][0]["rev"],
        json!(10)
    );
    browser.assert_no_js_errors().await;
}
on_both_engines!(restore_one_panel_then_the_whole_workspace);

// ---------------------------------------------------------------------------------------------
// "Undo this turn" in the chat: done, refused by a later change, nothing to undo
// ---------------------------------------------------------------------------------------------

fn flat_script() -> Value {
    json!({"responses": [
        {"text": "", "tool_calls": [
            {"name": "set_objective", "arguments": {
                "objective": "Find a flat in Berlin",
                "action_and_reasoning": "Setting the goal."}},
            {"name": "add_todos", "arguments": {
                "steps": [{"text": "Set a budget"}, {"text": "Visit three flats"}],
                "action_and_reasoning": "A first plan."}}
        ]},
        {"text": "Objective and plan are set."},
        {"text": "", "tool_calls": [
            {"name": "update_document", "arguments": {
                "title": "Flats", "content": "Shortlist: none yet.\n",
                "action_and_reasoning": "Starting the shortlist."}}
        ]},
        {"text": "The shortlist is started."},
        {"text": "", "tool_calls": [
            {"name": "list_todos", "arguments": {"action_and_reasoning": "Reading the plan."}}
        ]},
        {"text": "Two steps so far."}
    ]})
}

async fn undo_a_turn_from_the_chat(engine: Engine) {
    let server = Server::start(ServerOptions::new(engine).replay(flat_script())).await;
    let thread = server.create_thread("flat", "Flat hunt").await;
    server.set_document(&thread, "Flats", "My notes\n").await; // 1
    let browser = Browser::start().await;
    open_thread(&browser, &server, &thread).await;
    for (message, answer) in [
        ("Help me find a flat", "Objective and plan are set."), // 2, 3
        ("Start a shortlist", "The shortlist is started."),     // 4
        ("What is the plan?", "Two steps so far."),             // nothing
    ] {
        send_chat(&browser, message).await;
        browser
            .wait_text(".turn .msg.assistant .msg-content", answer)
            .await;
        browser
            .wait_js(
                "the turn to finish",
                "return document.querySelector('#chat-send').disabled === false;",
                vec![],
            )
            .await;
    }
    browser.wait_count(".turn button.turn-undo", 3).await;
    browser
        .wait_text("#document-view", "Shortlist: none yet.")
        .await;
    // A person changes the objective turn 1 set: revision 5.
    server.set_objective(&thread, "My own goal").await;
    browser.wait_text("#objective-text", "My own goal").await;

    // Turn 1 cannot be undone without losing that: refused, said why, nothing changed.
    let before = server.workspace(&thread).await;
    browser
        .click(".turn[data-turn-index=\"1\"] button.turn-undo")
        .await;
    let message = ".turn[data-turn-index=\"1\"] .undo-message[data-kind=\"conflict\"]";
    browser.wait_visible(message).await;
    browser.wait_text(message, "revision 5").await;
    browser.wait_text(message, "Nothing was changed").await;
    browser
        .wait_for(&format!(
            "{message} .undo-conflicts li[data-panel=\"objective\"][data-rev=\"5\"]"
        ))
        .await;
    assert_eq!(
        server.workspace(&thread).await,
        before,
        "a refused undo changes nothing"
    );

    // Turn 3 only read the plan: nothing to undo.
    browser
        .click(".turn[data-turn-index=\"3\"] button.turn-undo")
        .await;
    browser
        .wait_text(
            ".turn[data-turn-index=\"3\"] .undo-message[data-kind=\"nothing\"]",
            "Nothing to undo: turn 3 has no change",
        )
        .await;

    // Turn 2 is undone: the document is the person's again, in the page too.
    browser
        .click(".turn[data-turn-index=\"2\"] button.turn-undo")
        .await;
    browser
        .wait_text(
            ".turn[data-turn-index=\"2\"] .undo-message[data-kind=\"done\"]",
            "Undone",
        )
        .await;
    let ws = wait_workspace(&server, &thread, "turn 2 undone", |ws| {
        ws["document"]["content"] == json!("My notes\n")
    })
    .await;
    assert_eq!(ws["objective"], json!("My own goal"));
    assert_eq!(step_texts(&ws), ["Set a budget", "Visit three flats"]);
    browser.wait_text("#document-view", "My notes").await;
    browser
        .wait_attr(
            ".turn[data-turn-index=\"2\"] button.turn-undo",
            "data-state",
            "undone",
        )
        .await;
    browser
        .screenshot(&browser::ui_target_dir().join("undo.png"))
        .await;
    let newest = &server.get(&format!("/api/threads/{thread}/history")).await["revisions"][0];
    assert_eq!(newest["reverted_turn"], json!(2), "{newest}");

    // From the refusal, the history opens on the change in the way.
    browser
        .click(".turn[data-turn-index=\"1\"] .undo-open-history")
        .await;
    browser.wait_visible("#history-dialog").await;
    wait_detail(&browser, 5).await;
    browser
        .wait_attr(
            "#history-list li[data-rev=\"5\"] button.history-rev-select",
            "aria-current",
            "true",
        )
        .await;
    browser
        .wait_text(
            "#history-list li[data-rev=\"6\"] .rev-badge.mark",
            "Undo of turn 2",
        )
        .await;
    browser.assert_no_js_errors().await;
}
on_both_engines!(undo_a_turn_from_the_chat);

// ---------------------------------------------------------------------------------------------
// Fork from here, then the fork beside its original
// ---------------------------------------------------------------------------------------------

async fn fork_from_here_and_compare_with_the_original(engine: Engine) {
    let server = Server::start(ServerOptions::new(engine)).await;
    let origin = server.create_thread("lisbon", "Moving to Lisbon").await;
    server.set_objective(&origin, "Move to Lisbon").await; // 1
    server
        .tool_ok(
            &origin,
            "add_todos",
            json!({"steps": [{"text": "Find a flat"}, {"text": "Open a bank account"}, {"text": "Learn Portuguese"}]}),
        )
        .await; // 2
    server
        .tool_ok(&origin, "toggle_todos", json!({"indices": [2]}))
        .await; // 3
    server
        .set_document(&origin, "Move", "Line one\nLine two\nLine three\n")
        .await; // 4
    server
        .add_preference(
            &origin,
            json!({"title": "Budget 1,500 EUR a month", "kind": "hard"}),
        )
        .await; // 5
    server
        .add_preference(&origin, json!({"title": "Near a park", "kind": "soft"}))
        .await; // 6

    let browser = Browser::start().await;
    open_thread(&browser, &server, &origin).await;
    assert!(
        !browser.is_visible("#compare-fork").await,
        "only a fork can be compared with its original"
    );
    open_history(&browser).await;
    select_rev(&browser, 6).await;
    browser.click("#history-fork").await;
    browser
        .type_into("#history-fork-title", "Lisbon, plan B")
        .await;
    browser.click("#history-fork-submit").await;

    // The fork opens.
    browser.wait_hidden("#history-dialog").await;
    browser.wait_text("#thread-heading", "Lisbon, plan B").await;
    let fork = browser
        .wait_js(
            "the fork's URL",
            "const m = location.pathname.match(/^\\/t\\/([^/]+)$/);
             return m && m[1] !== arguments[0] && document.body.dataset.ready === 'true' ? m[1] : null;",
            vec![json!(origin)],
        )
        .await
        .as_str()
        .unwrap()
        .to_string();
    let made = server.get(&format!("/api/threads/{fork}")).await;
    assert_eq!(made["title"], json!("Lisbon, plan B"));
    assert_eq!(made["forked_from"], json!({"thread_id": origin, "rev": 6}));
    browser
        .wait_attr(
            &format!("#thread-list li[data-thread-id=\"{fork}\"]"),
            "aria-current",
            "page",
        )
        .await;
    browser.wait_visible("#compare-fork").await;
    browser.wait_text("#document-view", "Line two").await;

    // The fork goes its own way; the original changes too, after the fork.
    server
        .set_document(
            &fork,
            "Move",
            "Line one\nLine 2, rewritten\nLine three\nLine four\n",
        )
        .await;
    server.add_todo(&fork, "Ship the boxes").await;
    server
        .tool_ok(&fork, "toggle_todos", json!({"indices": [1]}))
        .await;
    let todos = server.get(&format!("/api/threads/{fork}/todos")).await;
    let learn = todos
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["text"] == json!("Learn Portuguese"))
        .unwrap()["id"]
        .clone();
    server
        .ok(
            Method::DELETE,
            &format!("/api/threads/{fork}/todos/{learn}"),
            None,
        )
        .await;
    let prefs = server
        .get(&format!("/api/threads/{fork}/preferences"))
        .await;
    let pref_id = |title: &str| {
        prefs
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["title"] == json!(title))
            .unwrap()["id"]
            .clone()
    };
    server
        .patch(
            &format!("/api/threads/{fork}/preferences/{}", pref_id("Near a park")),
            json!({"kind": "hard"}),
        )
        .await;
    server
        .patch(
            &format!(
                "/api/threads/{fork}/preferences/{}",
                pref_id("Budget 1,500 EUR a month")
            ),
            json!({"locked": true}),
        )
        .await;
    server
        .add_preference(&fork, json!({"title": "Quiet street", "kind": "soft"}))
        .await;
    server
        .set_objective(&origin, "Changed after the fork")
        .await;
    browser
        .wait_text("#plan-list .plan-step-text", "Ship the boxes")
        .await;

    // Side by side: the original at revision 6, the fork now.
    browser.click("#compare-fork").await;
    browser.wait_visible("#compare-dialog").await;
    browser
        .wait_text("#compare-original-head", "“Moving to Lisbon” at revision 6")
        .await;
    browser
        .wait_text("#compare-fork-head", "“Lisbon, plan B” now")
        .await;
    browser.wait_for("#compare-document-diff .diff-row").await;
    assert_eq!(
        browser
            .texts("#compare-document-diff del.diff-del .diff-text")
            .await,
        ["Line two"]
    );
    assert_eq!(
        browser
            .texts("#compare-document-diff ins.diff-add .diff-text")
            .await,
        ["Line 2, rewritten", "Line four"]
    );
    // Removed on the left, added on the right, in the same row.
    let row = browser
        .js(
            "const r = [...document.querySelectorAll('#compare-document-diff .diff-row')].find((r) => r.textContent.includes('Line two'));
             return r ? [...r.children].map((c) => c.className) : null;",
            vec![],
        )
        .await;
    assert_eq!(row, json!(["diff-line diff-del", "diff-line diff-add"]));
    browser
        .wait_text(
            "#compare-document-summary",
            "1 line removed · 2 lines added",
        )
        .await;
    // The objective is compared as at the fork, not with the original's later change.
    browser
        .wait_for("#compare-objective-rows li[data-diff=\"same\"]")
        .await;
    assert!(
        !browser
            .texts("#compare-objective-rows")
            .await
            .join(" ")
            .contains("Changed after the fork")
    );

    // The plan: a step only on each side, one ticked differently, one the same.
    let plan = "#compare-plan-rows li";
    let rows = |kind: &str| format!("{plan}[data-diff=\"{kind}\"]");
    assert_eq!(
        browser
            .texts(&format!(
                "{} .side-original .compare-text",
                rows("only-original")
            ))
            .await,
        ["Learn Portuguese"]
    );
    assert_eq!(
        browser
            .texts(&format!("{} .side-fork .compare-text", rows("only-fork")))
            .await,
        ["Ship the boxes"]
    );
    assert_eq!(
        browser
            .texts(&format!(
                "{} .side-fork .compare-text",
                rows("done-changed")
            ))
            .await,
        ["Find a flat"]
    );
    browser
        .wait_text_content(&rows("done-changed"), "done only in this fork")
        .await;
    assert_eq!(
        browser
            .texts(&format!("{} .side-fork .compare-text", rows("same")))
            .await,
        ["Open a bank account"]
    );
    browser
        .wait_text_content(&rows("only-original"), "only in the original")
        .await;
    browser
        .wait_text_content(&rows("only-fork"), "only in this fork")
        .await;

    // The preferences: by title, kind and lock.
    let prefs = |kind: &str| format!("#compare-preference-rows li[data-diff=\"{kind}\"]");
    let changed = browser.texts(&prefs("changed")).await;
    assert_eq!(changed.len(), 2, "{changed:?}");
    assert!(
        changed
            .iter()
            .any(|c| c.contains("Budget 1,500 EUR a month") && c.contains("locked in this fork")),
        "{changed:?}"
    );
    assert!(
        changed
            .iter()
            .any(|c| c.contains("Near a park") && c.contains("kind: soft → hard")),
        "{changed:?}"
    );
    assert_eq!(
        browser
            .texts(&format!("{} .side-fork .compare-text", prefs("only-fork")))
            .await,
        ["Quiet street"]
    );
    assert_eq!(browser.count(&prefs("only-original")).await, 0);
    browser
        .wait_text("#compare-plan-summary", "1 step only in the original")
        .await;
    browser
        .screenshot(&browser::ui_target_dir().join("compare.png"))
        .await;

    browser.click("#compare-close").await;
    browser.wait_hidden("#compare-dialog").await;
    // The original is untouched by all this.
    let original = server.workspace(&origin).await;
    assert_eq!(
        step_texts(&original),
        ["Find a flat", "Open a bank account", "Learn Portuguese"]
    );
    assert_eq!(
        original["document"]["content"],
        json!("Line one\nLine two\nLine three\n")
    );
    browser.assert_no_js_errors().await;
}
on_both_engines!(fork_from_here_and_compare_with_the_original);

// ---------------------------------------------------------------------------------------------
// Paging with "Load older", and the exported recording
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_pages_and_export_downloads_the_recording() {
    needs!(chromium);
    let server = Server::start(ServerOptions::new(Engine::Sqlite)).await;
    let thread = server.create_thread("long", "A long story").await;
    for i in 1..=55 {
        server
            .set_objective(&thread, &format!("Goal number {i}"))
            .await;
    }
    let browser = Browser::start().await;
    open_thread(&browser, &server, &thread).await;
    open_history(&browser).await;
    browser.wait_count("#history-list li[data-rev]", 50).await;
    let revs = listed_revs(&browser).await;
    assert_eq!((revs[0], revs[49]), (55, 6));
    browser.click("#history-more").await;
    browser.wait_count("#history-list li[data-rev]", 56).await;
    assert_eq!(
        listed_revs(&browser).await,
        (0..=55).rev().collect::<Vec<i64>>()
    );
    browser.wait_hidden("#history-more").await;
    // The start: the empty workspace.
    select_rev(&browser, 0).await;
    browser
        .wait_text("#history-snapshot .snap-objective", "No objective.")
        .await;
    browser.click("#history-close").await;
    browser.wait_hidden("#history-dialog").await;

    // Export: the file lands in the download folder, its first line is the thread.
    let downloads = tempfile::tempdir().unwrap();
    browser.allow_downloads(downloads.path()).await;
    browser.click("#export-thread").await;
    browser.wait_text("#toasts .toast", "Exported").await;
    let file = downloads.path().join(format!("{thread}.haico.jsonl"));
    let deadline = Instant::now() + Duration::from_secs(20);
    let text = loop {
        if let Ok(text) = std::fs::read_to_string(&file)
            && text.ends_with('\n')
        {
            break text;
        }
        if Instant::now() > deadline {
            let seen: Vec<_> = std::fs::read_dir(downloads.path())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            browser
                .fail(&format!(
                    "no download {}: the folder holds {seen:?}",
                    file.display()
                ))
                .await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["type"], json!("thread"), "{first}");
    assert_eq!(first["format"], json!("haico-recording/1"));
    assert_eq!(first["id"], json!(thread));
    assert_eq!(first["title"], json!("A long story"));
    let revisions = text
        .lines()
        .filter(|l| serde_json::from_str::<Value>(l).unwrap()["type"] == json!("revision"))
        .count();
    assert_eq!(revisions, 55, "every revision is in the recording");
    // The same bytes as the API's.
    let resp = server
        .http
        .get(server.url(&format!("/api/threads/{thread}/export")))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.text().await.unwrap(), text);
    browser.assert_no_js_errors().await;
}

// ---------------------------------------------------------------------------------------------
// By keyboard alone; labelled controls; the phone layout
// ---------------------------------------------------------------------------------------------

/// Controls without an accessible name (as in layout.rs).
const UNLABELLED_JS: &str = "
  const named = (el) => (el.getAttribute('aria-label') || '').trim() || (el.labels && el.labels.length);
  const buttons = [...document.querySelectorAll('button')]
    .filter((b) => !(b.getAttribute('aria-label') || b.textContent).trim());
  const fields = [...document.querySelectorAll('input, select, textarea')]
    .filter((f) => f.type !== 'hidden' && !named(f));
  return [...buttons, ...fields].map((el) => el.outerHTML.slice(0, 120));";

/// Presses Tab until `id` has the focus (at most `max` times).
async fn tab_to(browser: &Browser, id: &str, max: usize) {
    let mut seen = Vec::new();
    for _ in 0..max {
        browser.press(TAB).await;
        let focused = browser.focused().await;
        if focused == id {
            return;
        }
        seen.push(focused);
    }
    browser
        .fail(&format!("Tab never reached #{id}; the focus went {seen:?}"))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_and_restore_by_keyboard_alone() {
    needs!(chromium);
    let server = Server::start(ServerOptions::new(Engine::Sqlite)).await;
    let thread = server.create_thread("keys", "Keys").await;
    server.set_objective(&thread, "Keyboard goal one").await; // 1
    server.set_objective(&thread, "Keyboard goal two").await; // 2
    let browser = Browser::start().await;
    open_thread(&browser, &server, &thread).await;

    // From the top of the page to the History button, and open it with Enter.
    browser
        .js(
            "document.activeElement && document.activeElement.blur(); return true;",
            vec![],
        )
        .await;
    tab_to(&browser, "history-open", 8).await;
    browser.press(ENTER_KEY).await;
    browser.wait_visible("#history-dialog").await;
    browser.wait_count("#history-list li[data-rev]", 3).await;
    // The newest revision has the focus; Tab to the older one and choose it with Enter.
    browser
        .wait_js(
            "the newest revision to have the focus",
            "const e = document.activeElement; return e && e.matches('#history-list li[data-rev=\"2\"] button.history-rev-select');",
            vec![],
        )
        .await;
    browser.press(TAB).await;
    browser
        .wait_js(
            "revision 1 to have the focus",
            "const e = document.activeElement; return e && e.matches('#history-list li[data-rev=\"1\"] button.history-rev-select');",
            vec![],
        )
        .await;
    browser.press(ENTER_KEY).await;
    wait_detail(&browser, 1).await;
    tab_to(&browser, "history-restore", 6).await;
    browser.press(ENTER_KEY).await;
    wait_workspace(&server, &thread, "restored by keyboard", |ws| {
        ws["objective"] == json!("Keyboard goal one")
    })
    .await;
    browser
        .wait_text("#history-status", "back as at revision 1")
        .await;
    browser
        .wait_text("#objective-text", "Keyboard goal one")
        .await;

    // Every control in the dialog has a name, the fork form open too.
    browser.click("#history-fork").await;
    browser.wait_visible("#history-fork-title").await;
    assert_eq!(browser.focused().await, "history-fork-title");
    // Escape in the form closes the form, not the dialog.
    browser.press(ESCAPE_KEY).await;
    browser.wait_hidden("#history-fork-form").await;
    assert!(browser.is_visible("#history-dialog").await);
    browser.click("#history-fork").await;
    let unlabelled = browser.js(UNLABELLED_JS, vec![]).await;
    assert_eq!(unlabelled, json!([]), "controls without a name");

    // Escape closes the dialog and gives the focus back to the History button.
    browser
        .js(
            "document.querySelector('#history-close').focus(); return true;",
            vec![],
        )
        .await;
    browser.press(ESCAPE_KEY).await;
    browser.wait_hidden("#history-dialog").await;
    browser
        .wait_js(
            "the focus back on #history-open",
            "return document.activeElement && document.activeElement.id === 'history-open';",
            vec![],
        )
        .await;

    // A phone: the app bar and the dialog fit the screen.
    browser.set_viewport(390, 844).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let bar = browser
        .js(
            "const b = document.querySelector('.app-bar'); const r = document.querySelector('#history-open').getBoundingClientRect();
             return {overflow: b.scrollWidth - b.clientWidth, right: r.right, width: r.width};",
            vec![],
        )
        .await;
    assert!(
        bar["overflow"].as_f64().unwrap() <= 0.5
            && bar["right"].as_f64().unwrap() <= 390.5
            && bar["width"].as_f64().unwrap() > 0.0,
        "the app bar at 390 px: {bar}"
    );
    open_history(&browser).await;
    select_rev(&browser, 1).await;
    let rects = browser
        .js(
            "const d = document.querySelector('#history-dialog').getBoundingClientRect();
             const s = document.querySelector('#history-snapshot').getBoundingClientRect();
             return {left: d.left, right: d.right, snapRight: s.right,
                     page: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)};",
            vec![],
        )
        .await;
    assert!(
        rects["left"].as_f64().unwrap() >= -0.5
            && rects["right"].as_f64().unwrap() <= 390.5
            && rects["snapRight"].as_f64().unwrap() <= 390.5
            && rects["page"].as_f64().unwrap() <= 390.5,
        "the history at 390 px: {rects}"
    );
    browser
        .screenshot(&browser::ui_target_dir().join("history-phone.png"))
        .await;
    browser.assert_no_js_errors().await;
}
