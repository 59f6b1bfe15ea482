//! People in the browser, on a server with accounts: the sign-in form (a wrong password, the
//! right one, a session ending under the page and the change it held carried through after
//! signing in again, signing out, another person's threads out of sight, guessing slowed
//! down), the owner sharing a thread (add a person, change their role, remove them, refusals
//! said in the dialog, the header on a phone), and a viewer's read-only page (who owns the
//! thread, who wrote what, forking as the way to change it, and a refused change when the
//! owner takes editing away mid-session); and the owner sharing a study, whose viewer is
//! offered nothing that changes it.

use reqwest::Method;
use serde_json::Value;

use super::*;
use browser::ENTER;

const ESCAPE_KEY: char = '\u{e00c}';

const ANN_PASSWORD: &str = "ann's long passphrase";
const BOB_PASSWORD: &str = "bob's long passphrase";

/// A server with two members, `ann` and `bob`.
fn with_ann_and_bob(options: ServerOptions) -> ServerOptions {
    options
        .account("ann", ANN_PASSWORD)
        .account("bob", BOB_PASSWORD)
}

/// Fills the sign-in form and submits it with its button.
async fn submit_sign_in(browser: &Browser, name: &str, password: &str) {
    browser.wait_visible("#sign-in-form").await;
    browser.type_into("#sign-in-name", name).await;
    browser.type_into("#sign-in-password", password).await;
    browser.click("#sign-in-submit").await;
}

/// Signs in and waits for the app: the form gone, the thread loaded and live, the name shown.
async fn sign_in(browser: &Browser, name: &str, password: &str) {
    submit_sign_in(browser, name, password).await;
    browser.wait_hidden("#sign-in").await;
    browser.wait_ready().await;
    browser
        .wait_attr("#connection-status", "data-state", "live")
        .await;
    browser.wait_text("#account-name", name).await;
}

/// The status of a same-origin `GET path` made by the page (with its cookie).
async fn page_status(browser: &Browser, path: &str) -> u64 {
    browser
        .js(
            "return fetch(arguments[0]).then((r) => r.status);",
            vec![json!(path)],
        )
        .await
        .as_u64()
        .unwrap()
}

/// `GET …/members` as the thread's owner, as `(name, role)` pairs.
async fn members(server: &Server, thread: &str) -> Vec<(String, String)> {
    server
        .get(&format!("/api/threads/{thread}/members"))
        .await
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["name"].as_str().unwrap().to_string(),
                m["role"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Signing in and out
// ---------------------------------------------------------------------------------------------

async fn signing_in_and_out(engine: Engine) {
    let server = Server::start(with_ann_and_bob(ServerOptions::new(engine))).await;
    server.act_as(Some("ann"));
    let notes = server.create_thread("ann-notes", "Ann's notes").await;

    let browser = Browser::start().await;
    browser.goto(&server.url("/")).await;
    // Nothing loads before someone signs in: the form, with the keyboard in its first field.
    browser.wait_visible("#sign-in-form").await;
    browser
        .wait_text("#sign-in-heading", "Sign in to haico")
        .await;
    browser
        .wait_js(
            "the focus in the name field",
            "return document.activeElement === document.querySelector('#sign-in-name');",
            vec![],
        )
        .await;
    assert!(!browser.is_visible("#messages").await);
    assert!(!browser.is_visible("#account").await);
    assert!(!browser.is_visible("#token-dialog").await);
    assert_eq!(page_status(&browser, "/api/me").await, 401);

    // A wrong password: said plainly, the password field emptied for another try.
    submit_sign_in(&browser, "ann", "not her password").await;
    browser.wait_visible("#sign-in-error").await;
    browser
        .wait_text("#sign-in-error", "name and password do not match")
        .await;
    assert_eq!(browser.text("#sign-in-password").await.as_deref(), Some(""));
    assert!(browser.is_visible("#sign-in-form").await);
    assert!(!browser.is_visible("#messages").await);
    browser
        .screenshot(&browser::ui_target_dir().join("sign-in.png"))
        .await;

    // The right one (Enter submits): the app, with her name and her thread.
    browser
        .type_into("#sign-in-password", &format!("{ANN_PASSWORD}{ENTER}"))
        .await;
    browser.wait_hidden("#sign-in").await;
    browser.wait_ready().await;
    browser.wait_text("#account-name", "ann").await;
    browser.wait_visible("#sign-out").await;
    browser.wait_text("#thread-heading", "Ann's notes").await;
    browser
        .wait_for(&format!(
            "#thread-list li[data-thread-id=\"{notes}\"][aria-current=\"page\"]"
        ))
        .await;
    // Her own thread names no owner.
    assert_eq!(browser.count("#thread-list .thread-owner").await, 0);
    assert_eq!(page_status(&browser, "/api/me").await, 200);
    browser
        .screenshot(&browser::ui_target_dir().join("signed-in.png"))
        .await;

    // The session ends under the page (as when another tab signs out): the next change brings
    // the form back, and signing in again carries that change through.
    let ended = browser
        .js(
            "return fetch('/api/session', {method: 'DELETE'}).then((r) => r.status);",
            vec![],
        )
        .await;
    assert_eq!(ended, json!(204));
    browser.click("#objective-edit").await;
    browser
        .type_into("#objective-input", &format!("Notes for May{ENTER}"))
        .await;
    browser.wait_visible("#sign-in-form").await;
    browser
        .wait_text("#sign-in-reason", "Your session has ended")
        .await;
    assert!(!browser.is_visible("#token-dialog").await);
    assert_eq!(
        browser.text("#sign-in-name").await.as_deref(),
        Some("ann"),
        "the name is kept"
    );
    browser
        .type_into("#sign-in-password", &format!("{ANN_PASSWORD}{ENTER}"))
        .await;
    browser.wait_hidden("#sign-in").await;
    browser.wait_text("#objective-text", "Notes for May").await;
    assert_eq!(
        server.workspace(&notes).await["objective"],
        json!("Notes for May")
    );

    // Signing out ends the session on the server and shows the form again.
    browser.click("#sign-out").await;
    browser.wait_visible("#sign-in-form").await;
    assert!(!browser.is_visible("#account").await);
    assert!(!browser.is_visible("#messages").await);
    assert_eq!(page_status(&browser, "/api/me").await, 401);
    browser.refresh().await;
    browser.wait_visible("#sign-in-form").await;

    // Bob signs in on the same browser: Ann's thread does not exist for him.
    sign_in(&browser, "bob", BOB_PASSWORD).await;
    let listed = browser
        .js(
            "return [...document.querySelectorAll('#thread-list li[data-thread-id]')].map((l) => l.dataset.threadId);",
            vec![],
        )
        .await;
    assert!(
        !listed.as_array().unwrap().contains(&json!(notes)),
        "bob sees only his threads: {listed}"
    );
    assert!(!browser.is_visible("#view-only-note").await);

    // Guessing is slowed down: after a few wrong passwords the form says how long to wait.
    browser.click("#sign-out").await;
    browser.wait_visible("#sign-in-form").await;
    let mut said = String::new();
    for _ in 0..12 {
        submit_sign_in(&browser, "bob", "a wrong guess").await;
        said = browser
            .wait_js(
                "the answer to a sign-in",
                "const e = document.querySelector('#sign-in-error');
                 return !document.querySelector('#sign-in-submit').disabled && !e.hidden ? e.textContent : null;",
                vec![],
            )
            .await
            .as_str()
            .unwrap()
            .to_string();
        if said.starts_with("Too many") {
            break;
        }
        assert!(said.contains("do not match"), "{said}");
    }
    assert!(
        said.starts_with("Too many wrong passwords. Wait ") && said.ends_with(", then try again."),
        "{said}"
    );
    assert!(browser.is_visible("#sign-in-form").await);
    browser.assert_no_js_errors().await;
}
on_both_engines!(signing_in_and_out);

// ---------------------------------------------------------------------------------------------
// The owner shares a thread
// ---------------------------------------------------------------------------------------------

async fn the_owner_shares_a_thread(engine: Engine) {
    let server = Server::start(with_ann_and_bob(ServerOptions::new(engine))).await;
    server.act_as(Some("ann"));
    let thread = server.create_thread("lisbon", "Lisbon in May").await;

    let browser = Browser::start().await;
    browser.goto(&server.url(&format!("/t/{thread}"))).await;
    sign_in(&browser, "ann", ANN_PASSWORD).await;
    browser.wait_text("#thread-heading", "Lisbon in May").await;

    browser.click("#share-open").await;
    browser.wait_visible("#share-dialog").await;
    browser
        .wait_text("#share-heading", "Share “Lisbon in May”")
        .await;
    assert_eq!(browser.focused().await, "share-name");
    let owner_row = "#share-members li[data-member=\"ann\"][data-role=\"owner\"]";
    browser.wait_text(owner_row, "ann").await;
    browser.wait_text("#share-count", "not shared").await;
    // The owner's own role is not a choice.
    assert_eq!(browser.count(&format!("{owner_row} select")).await, 0);

    // An unknown name: the server's refusal, in the dialog.
    browser.type_into("#share-name", "nobody").await;
    browser.click("#share-add").await;
    browser.wait_visible("#share-error").await;
    browser
        .wait_text("#share-error", "account named `nobody`")
        .await;
    assert_eq!(members(&server, &thread).await, pairs(&[("ann", "owner")]));

    // Bob as a viewer (the default role; Enter shares).
    browser
        .type_into("#share-name", &format!("bob{ENTER}"))
        .await;
    let bob_row = "#share-members li[data-member=\"bob\"]";
    browser
        .wait_for(&format!("{bob_row}[data-role=\"viewer\"]"))
        .await;
    browser.wait_text("#share-status", "bob can now view").await;
    browser.wait_hidden("#share-error").await;
    browser.wait_text("#share-count", "shared with 1").await;
    assert_eq!(
        browser.texts("#share-members li[data-member]").await.len(),
        2
    );
    assert_eq!(
        members(&server, &thread).await,
        pairs(&[("ann", "owner"), ("bob", "viewer")])
    );
    assert_eq!(browser.text("#share-name").await.as_deref(), Some(""));

    // Bob becomes an editor.
    let editor = browser
        .find(&format!(
            "{bob_row} select.member-role option[value=\"editor\"]"
        ))
        .await;
    editor.click().await.expect("choose the editor role");
    browser
        .wait_for(&format!("{bob_row}[data-role=\"editor\"]"))
        .await;
    browser
        .wait_text("#share-status", "bob can now view and change")
        .await;
    assert_eq!(
        members(&server, &thread).await,
        pairs(&[("ann", "owner"), ("bob", "editor")])
    );
    browser
        .screenshot(&browser::ui_target_dir().join("share.png"))
        .await;

    // And is removed.
    browser
        .click(&format!("{bob_row} button.member-remove"))
        .await;
    browser
        .wait_count("#share-members li[data-member]", 1)
        .await;
    browser
        .wait_text("#share-status", "bob no longer has this thread")
        .await;
    assert_eq!(members(&server, &thread).await, pairs(&[("ann", "owner")]));
    server.act_as(Some("bob"));
    let (status, _) = server
        .request(Method::GET, &format!("/api/threads/{thread}"), None)
        .await;
    assert_eq!(status, 404, "the thread is gone for bob");
    server.act_as(Some("ann"));

    // Escape closes the dialog and gives the keyboard back to its button.
    browser.press(ESCAPE_KEY).await;
    browser.wait_hidden("#share-dialog").await;
    browser
        .wait_js(
            "the focus back on #share-open",
            "return document.activeElement === document.querySelector('#share-open');",
            vec![],
        )
        .await;

    // On a phone the header still fits: her name, Sign out and Share within the screen.
    browser.set_viewport(390, 844).await;
    browser.wait_visible("#sign-out").await;
    let fits = browser
        .js(
            "const inside = (s) => { const r = document.querySelector(s).getBoundingClientRect(); return r.left >= 0 && r.right <= innerWidth; };
             return [document.documentElement.scrollWidth <= innerWidth, inside('#sign-out'), inside('#account-name'), inside('#share-open')];",
            vec![],
        )
        .await;
    browser
        .screenshot(&browser::ui_target_dir().join("share-phone.png"))
        .await;
    assert_eq!(fits, json!([true, true, true, true]), "at 390 px wide");
    browser.assert_no_js_errors().await;
}
on_both_engines!(the_owner_shares_a_thread);

// ---------------------------------------------------------------------------------------------
// A viewer's page
// ---------------------------------------------------------------------------------------------

fn ann_asks_script() -> Value {
    json!({"responses": [
        {"text": "", "tool_calls": [
            {"name": "set_objective", "arguments": {
                "objective": "A week in Lisbon",
                "action_and_reasoning": "Noting Ann's goal."}}
        ]},
        {"text": "The objective is set."}
    ]})
}

async fn a_viewer_reads_but_does_not_change(engine: Engine) {
    let server = Server::start(with_ann_and_bob(
        ServerOptions::new(engine).replay(ann_asks_script()),
    ))
    .await;
    server.act_as(Some("ann"));
    let lisbon = server.create_thread("lisbon", "Lisbon in May").await;
    server
        .ok(
            Method::POST,
            &format!("/api/threads/{lisbon}/chat"),
            Some(json!({"message": "Plan a week in Lisbon"})),
        )
        .await;
    server.add_todo(&lisbon, "Book the flights").await;
    server
        .add_preference(&lisbon, json!({"title": "Window seat", "kind": "soft"}))
        .await;
    server
        .set_document(&lisbon, "Lisbon", "# Lisbon\n\nDay one: Alfama.\n")
        .await;
    server
        .put(
            &format!("/api/threads/{lisbon}/members/bob"),
            json!({"role": "viewer"}),
        )
        .await;
    let budget = server.create_thread("budget", "Shared budget").await;
    server
        .put(
            &format!("/api/threads/{budget}/members/bob"),
            json!({"role": "editor"}),
        )
        .await;

    let browser = Browser::start().await;
    browser.goto(&server.url(&format!("/t/{lisbon}"))).await;
    sign_in(&browser, "bob", BOB_PASSWORD).await;
    browser
        .wait_text("#objective-text", "A week in Lisbon")
        .await;

    // The list says whose the threads are, and which one bob may only read.
    let lisbon_row = format!("#thread-list li[data-thread-id=\"{lisbon}\"]");
    browser
        .wait_text(&format!("{lisbon_row} .thread-owner"), "shared by ann")
        .await;
    browser
        .wait_visible(&format!("{lisbon_row} .thread-badge.view-only"))
        .await;
    assert_eq!(
        browser
            .count(&format!("{lisbon_row} button[data-action]"))
            .await,
        0,
        "a viewer can neither rename nor delete"
    );
    assert_eq!(
        browser.texts(&lisbon_row).await,
        ["Lisbon in May, shared by ann, view only"],
        "the row reads as one line"
    );
    let budget_row = format!("#thread-list li[data-thread-id=\"{budget}\"]");
    browser
        .wait_text(&format!("{budget_row} .thread-owner"), "shared by ann")
        .await;
    assert_eq!(
        browser
            .count(&format!("{budget_row} .thread-badge.view-only"))
            .await,
        0
    );

    // The page is read-only, and says so.
    browser.wait_visible("#view-only-note").await;
    browser
        .wait_text(
            "#view-only-note",
            "You can view this thread; ask its owner to make you an editor to change it.",
        )
        .await;
    assert_eq!(
        browser
            .js(
                "return ['#chat-input', '#chat-send'].map((s) => document.querySelector(s).disabled);",
                vec![]
            )
            .await,
        json!([true, true]),
        "the chat input and Send are disabled"
    );
    for control in [
        "#objective-edit",
        "#document-edit",
        "#preference-form",
        "#plan-form",
        "#preference-list button",
        "#plan-list button",
        ".turn-undo",
        "#share-open",
    ] {
        assert!(
            !browser.is_visible(control).await,
            "{control} is hidden from a viewer"
        );
    }
    assert_eq!(
        browser
            .js(
                "return [...document.querySelectorAll('#plan-list input.plan-step-done')].map((c) => c.disabled);",
                vec![]
            )
            .await,
        json!([true])
    );
    // Everything can still be read, and who wrote what is shown.
    browser
        .wait_text("#document-view", "Day one: Alfama.")
        .await;
    browser
        .wait_text(".turn .msg.user", "Plan a week in Lisbon")
        .await;
    browser.wait_text(".turn .msg-by", "ann").await;
    browser
        .wait_text(".turn .msg.assistant", "The objective is set.")
        .await;
    browser
        .screenshot(&browser::ui_target_dir().join("viewer.png"))
        .await;

    // The history names Ann on her changes and the agent's; restoring is not offered.
    browser.click("#history-open").await;
    browser.wait_visible("#history-dialog").await;
    browser.wait_count("#history-list li[data-rev]", 5).await;
    let by = browser.texts("#history-list li[data-rev] .rev-by").await;
    assert_eq!(by.len(), 4, "{by:?}");
    assert!(by.iter().all(|b| b.starts_with("ann")), "{by:?}");
    let first = "#history-list li[data-rev=\"1\"]";
    assert_eq!(
        [
            browser.texts(&format!("{first} .rev-by")).await,
            browser.texts(&format!("{first} .rev-who")).await,
            browser.texts(&format!("{first} .rev-tool")).await,
        ],
        [["ann ·"], ["agent"], ["set_objective"]],
        "the agent's change, made for ann"
    );
    browser
        .click("#history-list li[data-rev=\"1\"] button.history-rev-select")
        .await;
    browser.wait_attr("#history-detail", "data-rev", "1").await;
    browser
        .wait_text("#history-detail-meta", "ann · agent")
        .await;
    assert!(!browser.is_visible("#history-restore").await);
    assert!(
        !browser
            .is_visible("#history-detail button[data-restore-panel]")
            .await
    );

    // Forking stays: the fork is bob's own, and editable.
    browser.click("#history-fork").await;
    browser
        .type_into("#history-fork-title", "Bob's Lisbon")
        .await;
    browser.click("#history-fork-submit").await;
    browser.wait_hidden("#history-dialog").await;
    browser.wait_text("#thread-heading", "Bob's Lisbon").await;
    browser.wait_ready().await;
    browser.wait_hidden("#view-only-note").await;
    browser
        .wait_js(
            "the chat input enabled in bob's fork",
            "const i = document.querySelector('#chat-input'); return i && !i.disabled;",
            vec![],
        )
        .await;
    assert!(browser.is_visible("#objective-edit").await);
    assert!(browser.is_visible("#share-open").await);
    let fork = browser
        .js(
            "return document.querySelector('#thread-list li[aria-current=\"page\"]').dataset.threadId;",
            vec![],
        )
        .await;
    let fork = fork.as_str().unwrap().to_string();
    server.act_as(Some("bob"));
    let forked = server.get(&format!("/api/threads/{fork}")).await;
    assert_eq!(forked["owner"], json!("bob"), "{forked}");
    assert_eq!(
        browser
            .count(&format!(
                "#thread-list li[data-thread-id=\"{fork}\"] .thread-meta"
            ))
            .await,
        0,
        "bob's own thread names no owner"
    );

    // An editor can change the shared budget…
    browser.click(&format!("{budget_row} a.thread-link")).await;
    browser.wait_text("#thread-heading", "Shared budget").await;
    browser.wait_ready().await;
    browser.wait_hidden("#view-only-note").await;
    // …until Ann makes him a viewer: his next change is refused with the server's reason, and
    // the page turns read-only.
    server.act_as(Some("ann"));
    server
        .put(
            &format!("/api/threads/{budget}/members/bob"),
            json!({"role": "viewer"}),
        )
        .await;
    browser.click("#objective-edit").await;
    browser
        .type_into("#objective-input", &format!("Spend less{ENTER}"))
        .await;
    browser.wait_visible("#banner").await;
    browser
        .wait_text("#banner", "you may read this thread but not change it")
        .await;
    browser.wait_visible("#view-only-note").await;
    browser
        .wait_visible(&format!("{budget_row} .thread-badge.view-only"))
        .await;
    assert_eq!(server.workspace(&budget).await["objective"], Value::Null);
    browser.assert_no_js_errors().await;
}
on_both_engines!(a_viewer_reads_but_does_not_change);

// ---------------------------------------------------------------------------------------------
// The owner shares a study
// ---------------------------------------------------------------------------------------------

/// `GET …/members` of a study as its owner, as `(name, role)` pairs.
async fn study_members(server: &Server, study: &str) -> Vec<(String, String)> {
    server
        .get(&format!("/api/studies/{study}/members"))
        .await
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["name"].as_str().unwrap().to_string(),
                m["role"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

async fn the_owner_shares_a_study_and_a_viewer_only_reads_it(engine: Engine) {
    let server = Server::start(with_ann_and_bob(ServerOptions::new(engine))).await;
    server.act_as(Some("ann"));
    let study = server
        .post(
            "/api/studies",
            json!({
                "title": "Ann's study",
                "task": {"title": "Task", "instructions": "Do it."},
                "consent": {"text": "We record what you do."},
                "completion": {"completed": {"code": "C1"}},
                "conditions": [{"key": "chat", "label": "Chat", "panels": [], "tools": []}],
            }),
        )
        .await;
    let id = study["id"].as_str().unwrap().to_string();
    let page = server.url(&format!("/studies/{id}"));

    let browser = Browser::start().await;
    browser.goto(&server.url("/")).await;
    sign_in(&browser, "ann", ANN_PASSWORD).await;
    browser.goto(&page).await;
    browser.wait_visible("#study-members-section").await;
    let owner_row = "#study-members li[data-member=\"ann\"][data-role=\"owner\"]";
    browser.wait_text(owner_row, "ann").await;
    browser
        .wait_text("#study-members-count", "not shared")
        .await;
    assert!(browser.is_visible("#study-delete").await);

    // An unknown name: the server's refusal, in the section; nothing changes.
    browser.type_into("#study-member-name", "nobody").await;
    browser.click("#study-member-add").await;
    browser
        .wait_text("#study-members-error", "account named `nobody`")
        .await;
    assert_eq!(
        study_members(&server, &id).await,
        pairs(&[("ann", "owner")])
    );

    // Bob as a viewer (the default; Enter adds), then once more: refused, said what to do.
    browser
        .type_into("#study-member-name", &format!("bob{ENTER}"))
        .await;
    let bob_row = "#study-members li[data-member=\"bob\"]";
    browser
        .wait_for(&format!("{bob_row}[data-role=\"viewer\"]"))
        .await;
    browser
        .wait_text("#study-members-status", "bob can now read")
        .await;
    browser
        .wait_text("#study-members-count", "shared with 1")
        .await;
    browser
        .type_into("#study-member-name", &format!("bob{ENTER}"))
        .await;
    browser
        .wait_text("#study-members-error", "member of this study already")
        .await;
    assert_eq!(
        study_members(&server, &id).await,
        pairs(&[("ann", "owner"), ("bob", "viewer")])
    );

    // Bob reads the study and is offered nothing that changes it.
    browser.goto(&server.url("/")).await;
    browser.click("#sign-out").await;
    browser.wait_visible("#sign-in-form").await;
    sign_in(&browser, "bob", BOB_PASSWORD).await;
    browser.goto(&server.url("/studies")).await;
    browser.wait_text("#studies-rows", "Ann's study").await;
    browser
        .wait_text("#studies-rows .study-role", "viewer")
        .await;
    browser.goto(&page).await;
    browser.wait_text("#study-title", "Ann's study").await;
    browser
        .wait_text("#study-design-note", "You may read this study")
        .await;
    for hidden in [
        "#study-open",
        "#study-delete",
        "#study-design-save",
        "#study-members-section",
        "#study-conditions .condition-preview",
    ] {
        assert!(
            !browser.is_visible(hidden).await,
            "{hidden} is offered to a viewer"
        );
    }
    browser.assert_no_js_errors().await;
}
on_both_engines!(the_owner_shares_a_study_and_a_viewer_only_reads_it);
