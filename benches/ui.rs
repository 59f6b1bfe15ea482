//! The web UI in a real headless Chromium against a release `haico serve` (SQLite).
//!
//! Measures what the UI issue promises: the first load's transferred bytes (compressed, as
//! the browser's Resource Timing reports them) and the time until every panel is drawn
//! (`performance.mark('haico-ready')`); then, with a 1 MB document and a 1,000-step plan, the
//! load time and the typing latency (key event → the next frame) in the document editor, the
//! chat box and the plan's add box, and how long the plan takes to redraw after the agent
//! changes it.
//!
//! `cargo bench --bench ui` (needs Debian's chromium and chromium-driver, as the browser tests).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    dead_code,
    unused_imports
)]

#[path = "../tests/integration/web_ui/browser.rs"]
mod browser;
#[path = "../tests/integration/common/mod.rs"]
mod common;

use std::time::Duration;

use browser::{Browser, Server, ServerOptions};
use common::Engine;
use serde_json::{Value, json};

const COLD_LOADS: usize = 5;

/// Installs a recorder of key → next-frame latencies on `selector`.
const RECORD_TYPING: &str = r#"
const el = document.querySelector(arguments[0]);
window.__lat = [];
el.addEventListener('keydown', (event) => {
  const start = event.timeStamp;
  requestAnimationFrame(() => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => window.__lat.push(performance.now() - start);
    channel.port2.postMessage(0);
  });
});
el.focus();
"#;

/// Bytes on the wire and milliseconds to `haico-ready` for the page just loaded.
const LOAD_FIGURES: &str = r#"
const nav = performance.getEntriesByType('navigation')[0];
const resources = performance.getEntriesByType('resource');
const assets = resources.filter((r) => new URL(r.name).pathname.startsWith('/assets/'));
const api = resources.filter((r) => new URL(r.name).pathname.startsWith('/api/'));
const sum = (list, key) => list.reduce((n, r) => n + (r[key] || 0), 0);
const ready = performance.getEntriesByName('haico-ready')[0];
return {
  html: nav.transferSize,
  assets: sum(assets, 'transferSize'),
  assets_decoded: sum(assets, 'decodedBodySize'),
  api: sum(api, 'transferSize'),
  ready_ms: ready ? ready.startTime : null,
  dom_interactive_ms: nav.domInteractive,
};
"#;

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

fn percentile(mut values: Vec<f64>, p: f64) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    let rank = ((values.len() as f64 - 1.0) * p).round() as usize;
    values[rank]
}

fn numbers(value: &Value) -> Vec<f64> {
    value
        .as_array()
        .expect("an array of numbers")
        .iter()
        .filter_map(Value::as_f64)
        .collect()
}

async fn typing_latency(browser: &Browser, selector: &str, text: &str) -> Vec<f64> {
    browser.js(RECORD_TYPING, vec![json!(selector)]).await;
    let el = browser.find(selector).await;
    for chunk in text.as_bytes().chunks(8) {
        el.send_keys(std::str::from_utf8(chunk).unwrap())
            .await
            .unwrap();
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    numbers(&browser.js("return window.__lat;", vec![]).await)
}

fn report_latency(what: &str, lat: Vec<f64>) {
    println!(
        "typing in {what}: {} keys, median {:.1} ms, p95 {:.1} ms, max {:.1} ms",
        lat.len(),
        median(lat.clone()),
        percentile(lat.clone(), 0.95),
        lat.iter().cloned().fold(0.0, f64::max)
    );
}

/// A Markdown document of about `bytes` bytes: sections with paragraphs, lists and tables.
fn big_document(bytes: usize) -> String {
    let mut doc = String::from("# A long working document\n\n");
    let mut section = 0;
    while doc.len() < bytes {
        section += 1;
        doc.push_str(&format!(
            "## Section {section}\n\nThis paragraph describes part {section} of the plan in \
             enough words to look like prose, with **bold**, *emphasis* and `code`.\n\n\
             - first point of {section}\n- second point\n- third point\n\n\
             | item | value |\n| --- | ---: |\n| a | {section} |\n| b | {} |\n\n",
            section * 2
        ));
    }
    doc
}

#[tokio::main]
async fn main() {
    let server = Server::start(ServerOptions::new(Engine::Sqlite)).await;

    // 1. First load of an ordinary thread, cold browser each time.
    let thread = server.create_thread("bench-small", "Small thread").await;
    server.set_objective(&thread, "Plan a trip").await;
    server
        .set_document(&thread, "Notes", &big_document(4_000))
        .await;
    for i in 0..10 {
        server.add_todo(&thread, &format!("Step {i}")).await;
    }
    let mut ready = Vec::new();
    let mut figures = Value::Null;
    for _ in 0..COLD_LOADS {
        let browser = Browser::start().await;
        browser.goto(&server.url(&format!("/t/{thread}"))).await;
        browser.wait_ready().await;
        figures = browser.js(LOAD_FIGURES, vec![]).await;
        ready.push(figures["ready_ms"].as_f64().unwrap_or(f64::NAN));
        drop(browser);
    }
    let shell = figures["html"].as_f64().unwrap_or(0.0) + figures["assets"].as_f64().unwrap_or(0.0);
    println!(
        "first load: page + assets {:.1} KB transferred ({:.1} KB uncompressed assets), API {:.1} KB; \
         ready (all panels drawn) median {:.0} ms over {COLD_LOADS} cold loads (min {:.0}, max {:.0})",
        shell / 1024.0,
        figures["assets_decoded"].as_f64().unwrap_or(0.0) / 1024.0,
        figures["api"].as_f64().unwrap_or(0.0) / 1024.0,
        median(ready.clone()),
        ready.iter().cloned().fold(f64::INFINITY, f64::min),
        ready.iter().cloned().fold(0.0, f64::max),
    );

    // 2. A 1 MB document and a 1,000-step plan.
    let big = server.create_thread("bench-big", "Big thread").await;
    let doc = big_document(1_000_000);
    server.set_document(&big, "Big", &doc).await;
    let steps: Vec<Value> = (0..1_000)
        .map(|i| json!({"text": format!("Step number {i} of the long plan"), "depth": i % 3}))
        .collect();
    // Chunks of a multiple of 3 steps, so each call's outline starts at depth 0.
    for chunk in steps.chunks(99) {
        server
            .tool_ok(&big, "add_todos", json!({"steps": chunk}))
            .await;
    }
    let browser = Browser::start().await;
    browser.goto(&server.url(&format!("/t/{big}"))).await;
    browser.wait_ready().await;
    let big_figures = browser.js(LOAD_FIGURES, vec![]).await;
    println!(
        "1 MB document + 1,000 steps: ready in {:.0} ms, API {:.0} KB transferred",
        big_figures["ready_ms"].as_f64().unwrap_or(f64::NAN),
        big_figures["api"].as_f64().unwrap_or(0.0) / 1024.0
    );
    let sentence = "the quick brown fox jumps over the lazy dog ";
    report_latency(
        "the chat box",
        typing_latency(&browser, "#chat-input", sentence).await,
    );
    report_latency(
        "the plan's add box",
        typing_latency(&browser, "#plan-input", sentence).await,
    );
    browser.find("#document-edit").await.click().await.unwrap();
    browser.wait_visible("#document-editor").await;
    report_latency(
        "the 1 MB document editor",
        typing_latency(&browser, "#document-editor", sentence).await,
    );

    // 3. The agent changes the plan: time until the 1,000-step list shows it.
    let mut redraws = Vec::new();
    for round in 0..5 {
        let marker = format!("Agent step {round}");
        browser
            .js(
                r#"window.__t0 = performance.now(); window.__seen = null;
                   const list = document.querySelector('#plan-list');
                   const obs = new MutationObserver(() => {
                     if (window.__seen === null && list.textContent.includes(arguments[0])) {
                       window.__seen = performance.now(); obs.disconnect();
                     }
                   });
                   obs.observe(list, {childList: true, subtree: true, characterData: true});"#,
                vec![json!(marker)],
            )
            .await;
        server
            .tool_ok(&big, "add_todos", json!({"steps": [{"text": marker}]}))
            .await;
        let seen = browser
            .wait_js(
                "the plan to show the agent's step",
                "return window.__seen === null ? null : window.__seen - window.__t0;",
                vec![],
            )
            .await;
        redraws.push(seen.as_f64().unwrap_or(f64::NAN));
    }
    println!(
        "agent adds a step to the 1,000-step plan → visible: median {:.0} ms (includes the HTTP call)",
        median(redraws)
    );
    drop(browser);
}
