//! Rendering Markdown through the server stays fast on inputs built to be slow: deep block
//! quotes, lists and raw HTML, on `POST /api/markdown` and the `?html=true` views of a stored
//! document (the old renderer took 12 s for 50,000 `>`, and 7–8 s per view of 40,000).

use crate::common;

use std::time::{Duration, Instant};

use common::server::{setup, teardown};
use haico::markdown::MAX_DEPTH;
use serde_json::json;

/// Generous for an unoptimised build on a busy machine, and far below the old times.
const BOUND: Duration = Duration::from_secs(2);

backend_tests! {
    async fn adversarial_markdown_renders_quickly_everywhere(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("t").await;

        for markdown in [
            ">".repeat(50_000),
            format!("{}deep", "- ".repeat(25_000)),
            "<div>".repeat(10_000),
            "_a_ ".repeat(12_500),
        ] {
            let started = Instant::now();
            let body = server.post("/api/markdown", &json!({"markdown": markdown})).await.expect(200);
            let took = started.elapsed();
            assert!(took < BOUND, "{}…: {took:?}", &markdown[..20]);
            assert!(body["html"].as_str().unwrap().len() > 100);
        }

        let deep = format!("{}the end", ">".repeat(40_000));
        server
            .request(reqwest::Method::PUT, "/api/threads/t/document", Some(&json!({"content": deep})))
            .await
            .expect(200);
        for path in ["/api/threads/t/document?html=true", "/api/threads/t/workspace?html=true"] {
            let started = Instant::now();
            let body = server.get(path).await.expect(200);
            let took = started.elapsed();
            assert!(took < BOUND, "{path}: {took:?}");
            let document = if body.get("document").is_some() { &body["document"] } else { &body };
            let html = document["html"].as_str().unwrap();
            assert_eq!(html.matches("<blockquote>").count(), MAX_DEPTH, "{path}");
            assert!(html.contains("the end"), "{path}: the text past the limit is kept");
            assert_eq!(document["content"].as_str().unwrap(), deep, "the stored Markdown is untouched");
        }

        // Several at once are each as quick: the renders run on the blocking pool.
        let started = Instant::now();
        let views = (0..4).map(|_| server.get("/api/threads/t/document?html=true"));
        for reply in futures::future::join_all(views).await {
            reply.expect(200);
        }
        assert!(started.elapsed() < 2 * BOUND, "{:?}", started.elapsed());
        teardown(tdb, server).await;
    }
}
