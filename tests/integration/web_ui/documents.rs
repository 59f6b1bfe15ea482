//! The document: editing while the agent writes (the conflict dialog), and hostile Markdown
//! and text rendering inert.

use super::*;

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
    needs!(chromium);
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
        .wait_text("#plan-list .plan-step-text", "<img src=x")
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
// A long document is edited one section at a time, and saving keeps every other section
// ---------------------------------------------------------------------------------------------

/// About 200 KB of Markdown in sections of about 5 KB, each headed `## Part N`.
fn long_document() -> String {
    let mut doc = String::from("# Long notes\n\n");
    for part in 1..=40 {
        doc.push_str(&format!("## Part {part}\n\n"));
        for line in 0..80 {
            doc.push_str(&format!(
                "Line {line} of part {part}, long enough to look like a sentence of notes.\n"
            ));
        }
        doc.push('\n');
    }
    doc
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_document_edits_one_section_and_keeps_the_rest() {
    needs!(chromium);
    let server = Server::start(ServerOptions::new(Engine::Sqlite)).await;
    let thread = server.create_thread("long", "Long").await;
    let original = long_document();
    assert!(original.len() > 150_000, "{}", original.len());
    server.set_document(&thread, "Long notes", &original).await;
    let browser = Browser::start().await;
    open_thread(&browser, &server, &thread).await;
    browser.wait_text("#document-view", "Part 40").await;

    browser.click("#document-edit").await;
    browser.wait_visible("#document-section-row").await;
    let sections = browser.count("#document-section option").await;
    assert!(
        sections >= 20,
        "the document is split into sections: {sections}"
    );
    // The editor holds one section, not the whole document.
    let held = browser
        .js(
            "return document.querySelector('#document-editor').value.length;",
            vec![],
        )
        .await;
    assert!(held.as_u64().unwrap() < 64 * 1024, "{held}");

    // Edit the start of section 3, switch to the last section, edit its start, save.
    for (index, marker) in [(2, "EDIT-IN-THREE "), (sections - 1, "EDIT-IN-LAST ")] {
        browser
            .js(
                "const s = document.querySelector('#document-section');
                 s.value = String(arguments[0]);
                 s.dispatchEvent(new Event('change'));",
                vec![json!(index)],
            )
            .await;
        browser
            .js(
                "const e = document.querySelector('#document-editor');
                 e.focus(); e.setSelectionRange(0, 0);",
                vec![],
            )
            .await;
        browser
            .find("#document-editor")
            .await
            .send_keys(marker)
            .await
            .unwrap();
    }
    browser.click("#document-save").await;
    browser.wait_hidden("#document-editor").await;
    browser.wait_text("#document-view", "EDIT-IN-LAST").await;

    let saved = server.document(&thread).await["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(saved.contains("EDIT-IN-THREE "), "first edit saved");
    assert!(saved.contains("EDIT-IN-LAST "), "second edit saved");
    assert_eq!(
        saved
            .replacen("EDIT-IN-THREE ", "", 1)
            .replacen("EDIT-IN-LAST ", "", 1),
        original,
        "every other character of the document is unchanged"
    );
    browser.assert_no_js_errors().await;
}

/// An image from another site is not fetched (the page's CSP forbids it, and a document the
/// agent wrote could carry a tracking pixel): it shows as a link to open by choice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn external_images_become_links() {
    needs!(chromium);
    let server = Server::start(ServerOptions::new(Engine::Sqlite)).await;
    let thread = server.create_thread("img", "Images").await;
    server
        .set_document(
            &thread,
            "Map",
            "# Route\n\n![The route map](https://example.com/map.png)\n\nText after.",
        )
        .await;
    let browser = Browser::start().await;
    open_thread(&browser, &server, &thread).await;
    browser.wait_text("#document-view", "Text after.").await;
    let seen = browser
        .js(
            "const v = document.querySelector('#document-view');
             const a = v.querySelector('a.external-image');
             return [v.querySelectorAll('img').length, a && a.getAttribute('href'),
                     a && a.textContent];",
            vec![],
        )
        .await;
    assert_eq!(
        seen,
        json!([0, "https://example.com/map.png", "Image: The route map"])
    );
    browser.assert_no_js_errors().await;
}
