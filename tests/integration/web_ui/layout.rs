//! One screen: layout at desktop and phone widths, threads and deep links, editing each
//! panel in place, the token prompt, and the screenshot for docs/.

use super::*;

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
    needs!(chromium);
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
    needs!(chromium);
    let server = Server::start(ServerOptions::new(Engine::Sqlite)).await;
    server.create_thread("alpha", "Alpha trip").await;
    server.set_objective("alpha", "Alpha objective").await;
    server.create_thread("beta", "Beta trip").await;
    server.set_objective("beta", "Beta objective").await;
    let browser = Browser::start().await;

    // Deep link.
    open_thread(&browser, &server, "alpha").await;
    shows_thread(&browser, "alpha", "Alpha objective").await;
    browser
        .wait_text("#thread-list li[data-thread-id=\"beta\"]", "Beta trip")
        .await;

    // Switch.
    browser
        .click("#thread-list li[data-thread-id=\"beta\"] a.thread-link")
        .await;
    shows_thread(&browser, "beta", "Beta objective").await;
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
    // Shown at once, saved in the background.
    crate::common::agent::eventually("the rename to be saved", || async {
        server.get("/api/threads/beta").await["title"] == json!("Beta renamed")
    })
    .await;
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
    // The list shows the new name at once and saves it in the background: wait for the save.
    crate::common::agent::eventually("the new name to be saved", || async {
        server.get(&format!("/api/threads/{created}")).await["title"] == json!("Gamma plans")
    })
    .await;

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
    shows_thread(&browser, "beta", "Beta objective").await;
    browser.assert_no_js_errors().await;
}

/// Waits until thread `id` is the open one in the sidebar and its objective is `objective`.
async fn shows_thread(browser: &Browser, id: &str, objective: &str) {
    browser
        .wait_attr(
            "#thread-list li[aria-current=\"page\"]",
            "data-thread-id",
            id,
        )
        .await;
    browser.wait_text("#objective-text", objective).await;
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

/// The `data-step-id` of the step whose text contains `text`.
async fn step_id(browser: &Browser, text: &str) -> String {
    browser
        .wait_js(
            &format!("a step containing {text:?}"),
            "const li = [...document.querySelectorAll('#plan-list li[data-step-id]')]
               .find((l) => l.querySelector('.plan-step-text') && l.querySelector('.plan-step-text').textContent.includes(arguments[0]));
             return li ? li.dataset.stepId : null;",
            vec![json!(text)],
        )
        .await
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panels_edit_in_place() {
    needs!(chromium);
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
    browser.wait_count("#plan-list li[data-step-id]", 4).await;

    // A step: Enter saves, Escape cancels.
    let id = step_id(&browser, "Pick dates").await;
    let li = format!("#plan-list li[data-step-id=\"{id}\"]");
    browser
        .click(&format!("{li} button[data-action=\"edit\"]"))
        .await;
    browser
        .type_into(
            "#plan-list .plan-step-edit-input",
            &format!("Pick dates in May{}", browser::ENTER),
        )
        .await;
    browser
        .wait_text(&format!("{li} .plan-step-text"), "Pick dates in May")
        .await;
    browser
        .click(&format!("{li} button[data-action=\"edit\"]"))
        .await;
    browser
        .type_into(
            "#plan-list .plan-step-edit-input",
            &format!("Not this{}", browser::ESCAPE),
        )
        .await;
    browser
        .wait_hidden("#plan-list .plan-step-edit-input")
        .await;
    browser
        .wait_text(&format!("{li} .plan-step-text"), "Pick dates in May")
        .await;

    // Deleting a step deletes its sub-steps.
    let id = step_id(&browser, "Book flights").await;
    browser
        .click(&format!(
            "#plan-list li[data-step-id=\"{id}\"] button[data-action=\"delete\"]"
        ))
        .await;
    confirm_if_asked(&browser).await;
    browser.wait_count("#plan-list li[data-step-id]", 2).await;
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
// ---------------------------------------------------------------------------------------------
// (g) a server with an API token
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_token_is_asked_once() {
    needs!(chromium);
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
// (i) the main screen, for docs/screenshot.png (scripts/screenshot.sh)
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn screenshot_of_the_main_screen() {
    needs!(chromium);
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

// ---------------------------------------------------------------------------------------------
// Keyboard use and labelled controls
// ---------------------------------------------------------------------------------------------

/// Controls without an accessible name: buttons with neither text nor `aria-label`, fields
/// with neither a `<label>` nor `aria-label`.
const UNLABELLED_JS: &str = "
  const named = (el) => (el.getAttribute('aria-label') || '').trim() || (el.labels && el.labels.length);
  const buttons = [...document.querySelectorAll('button')]
    .filter((b) => !(b.getAttribute('aria-label') || b.textContent).trim());
  const fields = [...document.querySelectorAll('input, select, textarea')]
    .filter((f) => f.type !== 'hidden' && !named(f));
  return [...buttons, ...fields].map((el) => el.outerHTML.slice(0, 120));";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyboard_only_plan_and_chat_with_labelled_controls() {
    needs!(chromium);
    let server = Server::start(ServerOptions::new(Engine::Sqlite)).await;
    let thread = server.create_thread("keys", "Keys").await;
    server
        .add_preference(&thread, json!({"title": "Aisle seat", "kind": "hard"}))
        .await;
    let browser = Browser::start().await;
    open_thread(&browser, &server, &thread).await;

    // Add a step with Enter, tick it with the space bar.
    browser
        .type_into("#plan-input", &format!("Keyboard step{}", browser::ENTER))
        .await;
    browser.wait_count("#plan-list li[data-step-id]", 1).await;
    browser
        .js(
            "document.querySelector('#plan-list input.plan-step-done').focus();",
            vec![],
        )
        .await;
    browser
        .client
        .active_element()
        .await
        .unwrap()
        .send_keys(" ")
        .await
        .unwrap();
    browser
        .wait_js(
            "the step to be ticked",
            "return document.querySelectorAll('#plan-list li.done').length === 1;",
            vec![],
        )
        .await;
    let todos = server.get(&format!("/api/threads/{thread}/todos")).await;
    assert_eq!(todos[0]["done"], json!(true), "{todos}");

    // Send a chat message with Enter (no model here: the turn fails, saying how to fix it).
    browser
        .type_into("#chat-input", &format!("Hello{}", browser::ENTER))
        .await;
    browser.wait_text(".turn .msg.user", "Hello").await;
    browser
        .wait_text(".turn .msg.error", "HAICO_LLM_PROVIDER")
        .await;

    // Every control has a name a screen reader can say, also with edit forms open.
    browser
        .click("#preference-list li[data-preference-id] button[data-action=\"edit\"]")
        .await;
    browser.wait_visible(".pref-edit-form").await;
    let unlabelled = browser.js(UNLABELLED_JS, vec![]).await;
    assert_eq!(unlabelled, json!([]), "controls without a name");
    browser.assert_no_js_errors().await;
}
