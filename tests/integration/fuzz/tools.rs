//! Fuzzing every tool through the real tools endpoint (`POST /api/threads/{id}/tools/{name}`)
//! on both engines: arguments shaped by the tool's own JSON Schema, the same arguments
//! mutated, and any JSON at all. Never a 5xx or a dropped connection; a failure envelope
//! (or a 4xx) leaves the workspace, the history and the thread list exactly as they were.
//!
//! `PROPTEST_CASES=2000 cargo test --test integration -- fuzz::tools` runs longer (cases per tool and kind).

use crate::common;
use crate::common::fuzz as fuzz_support;

use common::server::{setup, teardown};
use fuzz_support::{
    call_and_check, cases, draw, from_schema, json_value, mutated, runner, snapshot,
};
use reqwest::Method;
use serde_json::Value;

backend_tests! {
    async fn every_tool_survives_fuzzed_arguments(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("t").await;
        let mut runner = runner(cases(8));
        let mut before = snapshot(&server, "t").await;
        let (mut succeeded, mut failed) = (0, 0);
        for spec in haico::tools::tool_specs() {
            let schema = &spec.parameters;
            let shaped = from_schema(schema, schema);
            let wrong = mutated(from_schema(schema, schema));
            let any = json_value();
            let path = format!("/api/threads/t/tools/{}", spec.name);
            for _ in 0..runner.config().cases {
                for strategy in [&shaped, &wrong, &any] {
                    let args = draw(&mut runner, strategy);
                    let (reply, after) =
                        call_and_check(&server, "t", Method::POST, &path, Some(&args), before.clone()).await;
                    if reply.status.is_success() {
                        let envelope = &reply.body;
                        assert!(envelope["success"].is_boolean(), "{}: {envelope}", spec.name);
                        if envelope["success"] == Value::Bool(true) {
                            succeeded += 1;
                        } else {
                            failed += 1;
                            assert!(envelope["error"].as_str().is_some_and(|e| !e.is_empty()), "{envelope}");
                            assert_eq!(before, after, "{}({}) failed but changed something: {envelope}",
                                spec.name, fuzz_support::shorten(Some(&args)));
                        }
                    }
                    before = after;
                }
            }
        }
        // Both outcomes were exercised: the shaped arguments are right often enough.
        assert!(succeeded > 0 && failed > 0, "{succeeded} succeeded, {failed} failed");
        server.get("/healthz").await.expect(200);
        teardown(tdb, server).await;
    }
}
