//! Studies in the browser (issue 42): a participant's page (`/s/{key}`) from consent to the
//! completion code, a decliner, links that lead nowhere or to a closed study, a countdown that
//! runs out, and the researcher's Studies page: a draft refused at its field and fixed, opened,
//! its link copied, a session watched in the table, replayed and scrubbed, the data downloaded
//! and a condition previewed.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::Value;

use super::*;

/// The replay script of one participant turn: the agent sets the objective, then answers.
fn objective_script() -> Value {
    json!({"responses": [
        {"text": "", "tool_calls": [{"name": "set_objective", "arguments": {
            "objective": "A vegetarian dinner for four",
            "action_and_reasoning": "Noting that the dinner is vegetarian."}}]},
        {"text": "Noted: a vegetarian dinner for four."}
    ]})
}

/// A valid design: one workspace condition (objective and document) with a key and label the
/// participant must never see, and `limits` as given.
fn design(limits: Value, conditions: Value) -> Value {
    json!({
        "title": "Browser study",
        "task": {"title": "Plan a dinner",
                 "instructions": "Plan a **dinner** for four with the assistant.",
                 "seed": {"objective": "A dinner for four",
                          "document": {"title": "Menu", "content": "# Menu\n"}}},
        "consent": {"text": "We record your messages and your edits.", "required": true},
        "entry": {"participant_param": "PROLIFIC_PID", "params": ["STUDY_ID"], "keep_params": ["STUDY_ID"]},
        "limits": limits,
        "completion": {
            "completed": {"code": "DONE1", "redirect_url": "https://example.org/done?cc={code}&s={session}"},
            "timed_out": {"code": "TIME1"},
            "no_consent": {"code": "NOCON1"}
        },
        "conditions": conditions,
    })
}

fn workspace_condition() -> Value {
    json!([{"key": "hiddenkey", "label": "Hidden label", "panels": ["objective", "document"], "tools": "*"}])
}

/// Makes a study as the server's local person and opens it; returns the study.
async fn open_study(server: &Server, design: Value) -> Value {
    let study = server.post("/api/studies", design).await;
    let id = study["id"].as_str().expect("a study id").to_string();
    server
        .post(&format!("/api/studies/{id}/open"), json!({}))
        .await
}

/// Lets the page use the clipboard without asking (as a person who allowed it would).
async fn allow_clipboard(browser: &Browser, server: &Server) {
    browser
        .cdp(
            "Browser.grantPermissions",
            json!({"origin": server.base, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]}),
        )
        .await;
}

/// What the clipboard holds, read by the page.
async fn clipboard(browser: &Browser) -> String {
    browser
        .js(
            "window.__clip = undefined;
             navigator.clipboard.readText().then((t) => { window.__clip = t; },
                                                 (e) => { window.__clip = `unreadable: ${e}`; });
             return true;",
            vec![],
        )
        .await;
    browser
        .wait_js(
            "the clipboard's text",
            "return window.__clip === undefined ? null : window.__clip;",
            vec![],
        )
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// `HAICO_STUDIES_SCREENSHOT=1` saves the page as it is now as `docs/{name}` (docs/STUDIES.md),
/// from the SQLite run only.
async fn doc_screenshot(browser: &Browser, engine: Engine, name: &str) {
    if engine == Engine::Sqlite && std::env::var_os("HAICO_STUDIES_SCREENSHOT").is_some() {
        browser
            .screenshot(&std::path::Path::new("docs").join(name))
            .await;
    }
}

/// Sets a textarea's text as typing would (an `input` event follows).
async fn set_text(browser: &Browser, css: &str, text: &str) {
    browser
        .js(
            "const t = document.querySelector(arguments[0]); t.value = arguments[1];
             t.dispatchEvent(new Event('input', {bubbles: true})); return true;",
            vec![json!(css), json!(text)],
        )
        .await;
}

// ---------------------------------------------------------------------------------------------
// A participant: consent → instructions → Start → a chat turn → Finish → the code
// ---------------------------------------------------------------------------------------------

async fn participant_consents_works_finishes_and_gets_the_code(engine: Engine) {
    let server = Server::start(ServerOptions::new(engine).replay(objective_script())).await;
    let study = open_study(
        &server,
        design(
            json!({"time_limit_s": 600, "min_turns": 1}),
            workspace_condition(),
        ),
    )
    .await;
    let link = format!(
        "{}?PROLIFIC_PID=pp_one&STUDY_ID=s1",
        study["entry_url"].as_str().unwrap()
    );
    let browser = Browser::start().await;
    allow_clipboard(&browser, &server).await;
    browser.goto(&server.url(&link)).await;

    // Consent: the study's text and the list of what is recorded.
    browser.wait_visible("#participant-consent").await;
    browser
        .wait_text("#participant-consent-text", "We record your messages")
        .await;
    assert_eq!(
        browser.count("#participant-records li").await,
        haico::studies::RECORDED.len(),
        "every recorded item is listed"
    );
    assert!(
        !browser.is_visible(".layout").await,
        "no workspace before Start"
    );
    browser.click("#participant-agree").await;

    // Instructions, rendered, then Start.
    browser.wait_visible("#participant-instructions").await;
    browser
        .wait_text("#participant-task-title", "Plan a dinner")
        .await;
    assert_eq!(
        browser
            .text("#participant-instructions-text strong")
            .await
            .as_deref(),
        Some("dinner"),
        "the instructions' Markdown is rendered"
    );
    browser.click("#participant-start").await;
    browser.wait_ready().await;
    browser
        .wait_attr("#connection-status", "data-state", "live")
        .await;

    // The workspace reduced to the condition: objective and document, the chat; nothing else.
    browser
        .wait_text("#objective-text", "A dinner for four")
        .await;
    assert_eq!(
        browser.text("#thread-heading").await.as_deref(),
        Some("Plan a dinner"),
        "the task's title heads the page, not its thread's id"
    );
    assert!(browser.is_visible("#document").await);
    for hidden in [
        "#plan",
        "#preferences",
        "#artifacts",
        "#threads",
        "#history-open",
        "#share-open",
        "#studies-link",
    ] {
        assert!(
            !browser.is_visible(hidden).await,
            "{hidden} is not for participants"
        );
    }
    browser
        .wait_attr("#participant-countdown", "data-state", "running")
        .await;
    let left: u64 = browser
        .find("#participant-countdown")
        .await
        .attr("data-remaining")
        .await
        .unwrap()
        .unwrap()
        .parse()
        .unwrap();
    assert!((590..=600).contains(&left), "time left {left}");

    // Finish before the study's minimum of turns: said in words.
    browser.click("#participant-finish").await;
    browser
        .wait_text("#participant-notice", "1 more turn with the assistant")
        .await;
    assert_eq!(
        browser
            .find("#participant-notice")
            .await
            .attr("data-kind")
            .await
            .unwrap()
            .as_deref(),
        Some("needs")
    );

    // A chat turn (the replay model sets the objective), then Finish.
    send_chat(&browser, "It should be vegetarian").await;
    browser
        .wait_text(
            ".turn .msg.assistant .msg-content",
            "Noted: a vegetarian dinner",
        )
        .await;
    browser
        .wait_text("#objective-text", "A vegetarian dinner for four")
        .await;
    browser
        .wait_attr("#participant-finish", "data-can-finish", "true")
        .await;
    doc_screenshot(&browser, engine, "study-participant.png").await;
    browser.click("#participant-finish").await;

    // The end screen: the code, a copy button, the way back.
    browser
        .wait_attr("#participant-end", "data-status", "completed")
        .await;
    assert_eq!(
        browser.text("#participant-code").await.as_deref(),
        Some("DONE1")
    );
    let back = browser
        .find("#participant-return")
        .await
        .attr("href")
        .await
        .unwrap()
        .unwrap_or_default();
    assert!(
        back.starts_with("https://example.org/done?cc=DONE1&s="),
        "{back}"
    );
    browser.click("#participant-code-copy").await;
    browser
        .wait_text("#participant-code-copied", "Copied")
        .await;
    assert_eq!(clipboard(&browser).await, "DONE1");

    // Never the condition's key or label.
    let page = browser
        .js(
            "return document.documentElement.outerHTML + document.body.innerText;",
            vec![],
        )
        .await;
    let page = page.as_str().unwrap();
    assert!(!page.contains("hiddenkey") && !page.contains("Hidden label"));

    // A reload resumes the same session: the same code, no second session.
    browser.refresh().await;
    browser
        .wait_attr("#participant-end", "data-status", "completed")
        .await;
    assert_eq!(
        browser.text("#participant-code").await.as_deref(),
        Some("DONE1")
    );
    let id = study["id"].as_str().unwrap();
    let sessions = server.get(&format!("/api/studies/{id}/sessions")).await;
    assert_eq!(sessions.as_array().unwrap().len(), 1, "{sessions}");
    assert_eq!(sessions[0]["status"], json!("completed"));
    browser.assert_no_js_errors().await;
}
on_both_engines!(participant_consents_works_finishes_and_gets_the_code);

// ---------------------------------------------------------------------------------------------
// A decliner, and links that lead nowhere
// ---------------------------------------------------------------------------------------------

async fn decliner_and_dead_links_are_told_what_to_do(engine: Engine) {
    let server = Server::start(ServerOptions::new(engine)).await;
    let study = open_study(&server, design(json!({}), workspace_condition())).await;
    let entry = study["entry_url"].as_str().unwrap().to_string();
    let browser = Browser::start().await;

    browser
        .goto(&server.url(&format!("{entry}?PROLIFIC_PID=no_thanks")))
        .await;
    browser.click("#participant-decline").await;
    browser
        .wait_attr("#participant-end", "data-status", "declined")
        .await;
    browser
        .wait_text("#participant-end-heading", "chose not to take part")
        .await;
    assert_eq!(
        browser.text("#participant-code").await.as_deref(),
        Some("NOCON1")
    );
    assert!(
        !browser.is_visible("#participant-return").await,
        "no redirect configured"
    );
    assert!(!browser.is_visible(".layout").await);

    // A malformed participant id.
    browser
        .goto(&server.url(&format!("{entry}?PROLIFIC_PID=not%20valid!")))
        .await;
    browser
        .wait_attr("#participant-error", "data-kind", "invalid")
        .await;
    browser
        .wait_text("#participant-error-text", "Open the study again")
        .await;

    // A link to no study: the page answers 404 and says so in words.
    let (status, _) = server
        .request(Method::GET, "/s/no-such-study-link", None)
        .await;
    assert_eq!(status, 404);
    browser.goto(&server.url("/s/no-such-study-link")).await;
    browser
        .wait_attr("#participant-error", "data-kind", "not-found")
        .await;
    browser
        .wait_text("#participant-error-heading", "does not lead to a study")
        .await;

    // A closed study.
    let id = study["id"].as_str().unwrap();
    server
        .post(&format!("/api/studies/{id}/close"), json!({}))
        .await;
    let (status, _) = server.request(Method::GET, &entry, None).await;
    assert_eq!(status, 200, "a closed study's page says so itself");
    browser
        .goto(&server.url(&format!("{entry}?PROLIFIC_PID=late_one")))
        .await;
    browser
        .wait_attr("#participant-error", "data-kind", "closed")
        .await;
    browser
        .wait_text("#participant-error-heading", "has closed")
        .await;
    browser.assert_no_js_errors().await;
}
on_both_engines!(decliner_and_dead_links_are_told_what_to_do);

// ---------------------------------------------------------------------------------------------
// The countdown: a plain-chat condition whose time runs out
// ---------------------------------------------------------------------------------------------

async fn countdown_runs_out_and_the_page_says_time_is_up(engine: Engine) {
    let server = Server::start(ServerOptions::new(engine)).await;
    let study = open_study(
        &server,
        design(
            json!({"time_limit_s": 7, "warn_before_s": 4}),
            json!([{"key": "chat", "label": "Plain chat", "panels": [], "tools": []}]),
        ),
    )
    .await;
    let browser = Browser::start().await;
    browser
        .goto(&server.url(&format!(
            "{}?PROLIFIC_PID=clock_one",
            study["entry_url"].as_str().unwrap()
        )))
        .await;
    browser.click("#participant-agree").await;
    browser.click("#participant-start").await;
    browser.wait_ready().await;

    // A plain chat: no workspace column at all.
    assert!(browser.is_visible("#chat").await);
    for hidden in [".column.left", ".column.centre", "#objective", "#document"] {
        assert!(
            !browser.is_visible(hidden).await,
            "{hidden} in a plain chat"
        );
    }
    browser.wait_visible("#participant-countdown").await;
    let first: u64 = browser
        .find("#participant-countdown")
        .await
        .attr("data-remaining")
        .await
        .unwrap()
        .unwrap()
        .parse()
        .unwrap();
    assert!(first <= 7, "{first}");

    // The server's warning, then the end: the end screen with the timed-out code.
    browser
        .wait_attr("#participant-notice", "data-kind", "warning")
        .await;
    browser.wait_text("#participant-notice", "left").await;
    browser
        .wait_js_for(
            "the timed-out end screen",
            "return document.querySelector('#participant-end').dataset.status === 'timed_out'
               && !document.querySelector('#participant-end').hidden;",
            vec![],
            Duration::from_secs(30),
        )
        .await;
    browser
        .wait_text("#participant-end-heading", "Time is up")
        .await;
    assert_eq!(
        browser.text("#participant-code").await.as_deref(),
        Some("TIME1")
    );
    assert!(!browser.is_visible("#participant-finish").await);
    assert!(!browser.is_visible(".layout").await);
    browser.assert_no_js_errors().await;
}
on_both_engines!(countdown_runs_out_and_the_page_says_time_is_up);

// ---------------------------------------------------------------------------------------------
// A researcher: design (refused, fixed), open, copy the link, watch, replay, download, preview
// ---------------------------------------------------------------------------------------------

/// A participant of `entry_url` driven over the API (its own client, no cookies): enters,
/// consents, starts, edits the document, and has one chat turn. Returns its session ref.
async fn participant_over_the_api(server: &Server, entry_url: &str) -> String {
    let http = reqwest::Client::new();
    let key = entry_url.trim_start_matches("/s/");
    let entered: Value = http
        .post(server.url(&format!("/api/s/{key}/sessions")))
        .json(&json!({"params": {"PROLIFIC_PID": "api_person"}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = entered["participant_token"]
        .as_str()
        .expect("a token")
        .to_string();
    let call = |method: Method, path: &str, body: Option<Value>| {
        let mut request = http.request(method, server.url(path)).bearer_auth(&token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        async move {
            let response = request.send().await.unwrap();
            let status = response.status();
            let text = response.text().await.unwrap();
            assert!(status.is_success(), "{status}: {text}");
            serde_json::from_str::<Value>(&text).unwrap_or(Value::Null)
        }
    };
    let view = call(
        Method::POST,
        "/api/participant/consent",
        Some(json!({"agree": true})),
    )
    .await;
    let thread = view["thread_id"].as_str().unwrap().to_string();
    call(Method::POST, "/api/participant/start", None).await;
    call(
        Method::PUT,
        &format!("/api/threads/{thread}/document"),
        Some(json!({"title": "Menu", "content": "# Menu\n\nSoup, then risotto.\n"})),
    )
    .await;
    call(
        Method::POST,
        &format!("/api/threads/{thread}/chat"),
        Some(json!({"message": "It should be vegetarian"})),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let turns = call(
            Method::GET,
            &format!("/api/threads/{thread}/messages"),
            None,
        )
        .await;
        if turns
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["status"] == json!("completed")))
        {
            break;
        }
        assert!(Instant::now() < deadline, "the turn did not end: {turns}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    entered["session"].as_str().unwrap().to_string()
}

/// The replay's workspace objective and revision at the scrubber's `position`.
async fn scrub_to(browser: &Browser, position: u64) -> (String, String) {
    browser
        .js(
            "const s = document.querySelector('#replay-scrubber'); s.value = String(arguments[0]);
             s.dispatchEvent(new Event('input', {bubbles: true})); return true;",
            vec![json!(position)],
        )
        .await;
    let seen = browser
        .wait_js(
            &format!("the replay at position {position}"),
            "const s = document.querySelector('#replay-scrubber');
             const w = document.querySelector('#replay-workspace');
             const o = w.querySelector('.snap-objective');
             return s.value === String(arguments[0]) && w.dataset.position === String(arguments[0]) && o
               ? [o.textContent, document.querySelector('#replay-workspace').dataset.rev] : null;",
            vec![json!(position)],
        )
        .await;
    (
        seen[0].as_str().unwrap().to_string(),
        seen[1].as_str().unwrap().to_string(),
    )
}

async fn researcher_designs_opens_watches_and_replays(engine: Engine) {
    let server = Server::start(ServerOptions::new(engine).replay(objective_script())).await;
    let browser = Browser::start().await;
    allow_clipboard(&browser, &server).await;

    // Reachable from the workspace.
    browser.open(&server.url("/")).await;
    browser.click("#studies-link").await;
    browser.wait_visible("#studies-list-view").await;
    browser.wait_visible("#studies-empty").await;

    // A draft with a field out of range: refused at that field, nothing stored.
    browser.click("#study-new").await;
    browser
        .wait_text("#study-new-design", "\"conditions\"")
        .await;
    let mut draft = design(
        json!({"time_limit_s": 2, "min_turns": 1}),
        json!([
            {"key": "workspace", "label": "Workspace", "panels": ["objective", "document"], "tools": "*"},
            // Not recruiting: the participant lands in the workspace condition; previews still work.
            {"key": "chat", "label": "Plain chat", "panels": [], "tools": [], "recruiting": false}
        ]),
    );
    set_text(
        &browser,
        "#study-new-design",
        &serde_json::to_string_pretty(&draft).unwrap(),
    )
    .await;
    browser.click("#study-create-save").await;
    browser
        .wait_attr("#study-new-error", "data-path", "limits.time_limit_s")
        .await;
    browser
        .wait_text("#study-new-error", "between 5 and 86400 seconds")
        .await;
    let selected = browser
        .js(
            "const t = document.querySelector('#study-new-design');
             return [t.value.slice(t.selectionStart, t.selectionEnd), t.getAttribute('aria-invalid')];",
            vec![],
        )
        .await;
    assert_eq!(
        selected[0],
        json!("    \"time_limit_s\": 2,"),
        "the field's line is selected"
    );
    assert_eq!(selected[1], json!("true"));
    assert_eq!(
        server.get("/api/studies").await,
        json!([]),
        "nothing was made"
    );

    // Fixed: the draft is made and its page opens.
    draft["limits"]["time_limit_s"] = json!(600);
    set_text(
        &browser,
        "#study-new-design",
        &serde_json::to_string_pretty(&draft).unwrap(),
    )
    .await;
    assert_eq!(
        browser
            .find("#study-new-design")
            .await
            .attr("aria-invalid")
            .await
            .unwrap(),
        None,
        "editing clears the mark"
    );
    browser.click("#study-create-save").await;
    browser
        .wait_attr("#study-status", "data-status", "draft")
        .await;
    browser
        .wait_count("#study-conditions .condition-card", 2)
        .await;
    let id = browser
        .current_url()
        .await
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    let study = server.get(&format!("/api/studies/{id}")).await;
    assert_eq!(study["status"], json!("draft"));

    // Open; the design freezes; the recruit link is copied.
    browser.click("#study-open").await;
    browser
        .wait_attr("#study-status", "data-status", "open")
        .await;
    assert_eq!(
        browser
            .find("#study-design")
            .await
            .attr("readonly")
            .await
            .unwrap()
            .as_deref(),
        Some("true")
    );
    assert!(!browser.is_visible("#study-design-save").await);
    browser.click("#study-link-copy").await;
    browser.wait_text("#study-link-copied", "Copied").await;
    let link = clipboard(&browser).await;
    let entry_url = study["entry_url"].as_str().unwrap();
    assert_eq!(
        link,
        format!(
            "{}{entry_url}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}",
            server.base
        )
    );

    // A participant works (over the API); the sessions table shows it.
    let session = participant_over_the_api(&server, entry_url).await;
    browser.click("#study-sessions-refresh").await;
    let row = format!("#study-session-rows tr[data-session=\"{session}\"]");
    browser.wait_for(&row).await;
    browser.wait_attr(&row, "data-status", "active").await;
    browser
        .wait_text(&format!("{row} .session-turns"), "1")
        .await;
    browser
        .wait_text(
            "#study-summary .summary-condition dd[data-status=\"active\"]",
            "1",
        )
        .await;
    if engine == Engine::Sqlite && std::env::var_os("HAICO_STUDIES_SCREENSHOT").is_some() {
        browser
            .js(
                "document.querySelector('#studies-page').scrollTop = 0; return true;",
                vec![],
            )
            .await;
        doc_screenshot(&browser, engine, "study-page.png").await;
    }

    // Replay: it opens at Start (after the seed), the workspace as it was then.
    browser
        .click(&format!(
            "button.session-replay[data-session=\"{session}\"]"
        ))
        .await;
    browser.wait_visible("#replay-dialog").await;
    browser.wait_for("#replay-workspace .snap-objective").await;
    let timeline = server
        .get(&format!("/api/studies/{id}/sessions/{session}/timeline"))
        .await;
    let events = timeline["events"].as_array().unwrap();
    let end = events.len() as u64;
    let seeded = events
        .iter()
        .take_while(|e| e["actor"] == json!("seed"))
        .count() as u64;
    assert_eq!(
        browser
            .find("#replay-scrubber")
            .await
            .attr("max")
            .await
            .unwrap(),
        Some(end.to_string())
    );
    browser
        .wait_js(
            "the replay to open at Start",
            "return document.querySelector('#replay-scrubber').value === arguments[0];",
            vec![json!(seeded.to_string())],
        )
        .await;
    assert_eq!(
        browser
            .find_all("#replay-workspace .snap-panel")
            .await
            .len(),
        2,
        "the participant's two panels"
    );
    assert_eq!(browser.count("#replay-chat .replay-msg").await, 0);

    // Scrub: before the agent's turn the objective is the seed's, at the end the agent's.
    let (before, rev_before) = scrub_to(&browser, seeded).await;
    assert_eq!(before, "A dinner for four");
    let (after, rev_after) = scrub_to(&browser, end).await;
    assert_eq!(
        after, "A vegetarian dinner for four",
        "at revision {rev_after} of {timeline:#}"
    );
    assert_ne!(rev_before, rev_after);
    assert_eq!(
        browser
            .count("#replay-chat .replay-msg[data-actor=\"participant\"]")
            .await,
        1
    );
    assert_eq!(
        browser
            .count("#replay-chat .replay-msg[data-actor=\"agent\"]")
            .await,
        1
    );
    browser
        .wait_text("#replay-chat .replay-step", "set_objective")
        .await;
    doc_screenshot(&browser, engine, "study-replay.png").await;

    // Step back one event, then play at 16× to the end.
    browser.click("#replay-back").await;
    browser
        .wait_js(
            "a step back",
            "return document.querySelector('#replay-scrubber').value === arguments[0];",
            vec![json!((end - 1).to_string())],
        )
        .await;
    scrub_to(&browser, seeded).await;
    browser.click("#replay-speed [data-speed=\"16\"]").await;
    browser
        .wait_attr("#replay-speed [data-speed=\"16\"]", "aria-pressed", "true")
        .await;
    browser.click("#replay-play").await;
    browser
        .wait_js_for(
            "the replay to play to the end",
            "return document.querySelector('#replay-scrubber').value === arguments[0]
               && document.querySelector('#replay-play').getAttribute('aria-pressed') === 'false';",
            vec![json!(end.to_string())],
            Duration::from_secs(40),
        )
        .await;
    browser
        .wait_text("#replay-workspace .snap-objective", "A vegetarian dinner")
        .await;
    browser.click("#replay-close").await;
    browser.wait_hidden("#replay-dialog").await;

    // The sessions as CSV.
    let downloads = tempfile::tempdir().unwrap();
    browser.allow_downloads(downloads.path()).await;
    browser.click("#study-download-csv").await;
    let file = downloads.path().join(format!("study-{id}-sessions.csv"));
    let deadline = Instant::now() + Duration::from_secs(20);
    let csv = loop {
        if let Ok(text) = std::fs::read_to_string(&file)
            && text.contains(&session)
        {
            break text;
        }
        if Instant::now() > deadline {
            browser
                .fail(&format!("no download {}", file.display()))
                .await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(!csv.contains("api_person"), "the CSV is pseudonymised");

    // A preview of the plain-chat condition opens the participant page in a new tab.
    let before = browser.client.windows().await.unwrap();
    browser
        .click("#study-conditions .condition-preview[data-condition=\"chat\"]")
        .await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let tab = loop {
        let now = browser.client.windows().await.unwrap();
        if let Some(tab) = now.into_iter().find(|w| !before.contains(w)) {
            break tab;
        }
        assert!(Instant::now() < deadline, "no preview tab opened");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    browser.assert_no_js_errors().await;
    browser.switch_to(&tab).await;
    browser.wait_visible("#participant-instructions").await;
    browser.wait_visible("#participant-preview-note").await;
    browser.click("#participant-start").await;
    browser.wait_ready().await;
    assert!(!browser.is_visible(".column.centre").await, "a plain chat");
    let sessions = server.get(&format!("/api/studies/{id}/sessions")).await;
    assert_eq!(
        sessions.as_array().unwrap().len(),
        1,
        "a preview counts nowhere"
    );
}
on_both_engines!(researcher_designs_opens_watches_and_replays);
